import Logging
import NIOCore
import StrataWire
import SwiftProtobuf

/// Starts saves from the event loop: a Save frame is decoded as it is read
/// and handed straight to ``ServerCore/save(_:clientName:)`` in a task of
/// its own, whose answer is written back on the loop, without the async
/// side's inbound stream, request loop, session and async writer (a
/// server's insert load is many small saves, and those hops were about a
/// tenth of its CPU).
///
/// The save and its answer are the async side's: the same call, the same
/// statuses and logging, the same statistics. It takes a save only:
/// - after the hello's answer was written (``ConnectionState/answersOnEventLoop``),
///   and not once the connection stops reading requests;
/// - while the socket is writable and a slot of the connection's in-flight
///   limit is free without waiting (``InFlightLimiter/tryAcquire()``), so
///   a client that pipelines without bound meets the async side's
///   backpressure; the slot is held until the answer is queued on the
///   loop, so a closing connection waits for the save as for any request.
/// Every other frame goes on to the async side unchanged.
final class SaveHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Frame
    typealias InboundOut = Frame
    /// Whole wire frames (the handler sits before the frame encoder).
    typealias OutboundOut = ByteBuffer

    /// `ClientFrame.save`'s field number (`Protocol/strata.proto`).
    static let saveField: UInt64 = 14
    static let operationName = Session.operationName(.save(Strata_V1_SaveRequest()))

    private let core: ServerCore
    private let state: ConnectionState
    private let maxFrameBytes: Int

    init(core: ServerCore, state: ConnectionState, maxFrameBytes: Int) {
        self.core = core
        self.state = state
        self.maxFrameBytes = maxFrameBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard state.answersOnEventLoop, context.channel.isWritable,
              CachedGetHandler.topLevelFields(of: frame.payload).contains(Self.saveField),
              let request = try? Strata_V1_ClientFrame(serializedBytes: ProtobufBytes(frame.payload)),
              request.requestID != 0, case .save(let save)? = request.request,
              state.limiter.tryAcquire() else {
            context.fireChannelRead(data)
            return
        }
        state.activity.touch()
        Self.start(save, requestID: request.requestID, core: core, state: state, maxFrameBytes: maxFrameBytes,
                   reply: NIOLoopBound(context, eventLoop: context.eventLoop), on: context.eventLoop)
    }

    /// Runs the save in a task of its own and queues its answer on the loop.
    private static func start(_ save: Strata_V1_SaveRequest, requestID: UInt64, core: ServerCore, state: ConnectionState, maxFrameBytes: Int,
                              reply: NIOLoopBound<ChannelHandlerContext>, on eventLoop: any EventLoop) {
        let clientName = state.clientName
        Task {
            let started = ContinuousClock.now
            var answer = Strata_V1_ServerFrame()
            answer.requestID = requestID
            var failed = false
            do {
                answer.response = .save(try await core.save(save, clientName: clientName))
            } catch {
                failed = true
                answer.status = Session.failureStatus(error, operation: operationName, requestID: requestID, logger: core.logger)
            }
            let buffer = framed(answer, requestID: requestID, compresses: state.compresses, maxFrameBytes: maxFrameBytes)
            core.stats.record(operation: operationName, duration: .now - started, failed: failed)
            // Queued on the loop before the slot is given back: a closing
            // connection (which waits for its slots) writes it first.
            eventLoop.execute {
                reply.value.writeAndFlush(NIOAny(buffer), promise: nil)
            }
            state.limiter.release()
        }
    }

    /// `answer` as one wire frame (compressed when agreed and large); an
    /// answer past the frame limit becomes the refusal the async side's
    /// writer gives.
    static func framed(_ answer: Strata_V1_ServerFrame, requestID: UInt64, compresses: Bool, maxFrameBytes: Int) -> ByteBuffer {
        var bytes: [UInt8] = (try? answer.serializedBytes()) ?? []
        if bytes.count > maxFrameBytes || bytes.isEmpty {
            var refusal = Strata_V1_ServerFrame()
            refusal.requestID = requestID
            refusal.status = WireError(.resourceExhausted, "the answer is \(bytes.count) bytes, more than the frame limit of \(maxFrameBytes) bytes").status
            bytes = (try? refusal.serializedBytes()) ?? []
        }
        let compress = compresses && bytes.count >= WireProtocol.compressionThreshold
        var buffer = ByteBufferAllocator().buffer(capacity: bytes.count + WireProtocol.headerSize)
        FrameEncoder.write(Frame(payload: ByteBuffer(bytes: bytes), compressed: compress), into: &buffer)
        return buffer
    }
}
