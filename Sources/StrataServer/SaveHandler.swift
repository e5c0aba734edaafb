import Logging
import NIOCore
import StrataContext
import StrataWire
import Tracing
import SwiftProtobuf

/// Starts saves from the event loop: a Save frame is decoded as it is read
/// (a save of inserts only from a caller bound by no access rules straight
/// into the coordinator's request, ``InsertSaveScan``; another save of
/// inserts by its fields, ``SaveFrameScan``; any other in full) and the
/// save started from here (``start(_:requestID:core:recorder:state:maxFrameBytes:logger:reply:batch:)``:
/// a small insert goes from the loop to the store's writer and back with
/// no task, anything else runs in a task of its own), its answer written
/// back on the loop, without the async side's inbound stream, request
/// loop, session and async writer (a server's insert load is many small
/// saves, and those hops were about a tenth of its CPU).
///
/// The save and its answer are the async side's: the same call, the same
/// statuses and logging (the connection's peer named), the same
/// statistics. It takes a save only:
/// - after the hello's answer was written (``ConnectionState/answersOnEventLoop``),
///   and not once the connection stops reading requests;
/// - of at most ``maximumFrameBytes`` (a larger one is decoded off the
///   loop, so one big save does not stall every connection of the loop);
/// - while the socket is writable and a slot of the connection's in-flight
///   limit is free without waiting (``InFlightLimiter/tryAcquire()``, which
///   refuses once the connection drains), so a client that pipelines
///   without bound meets the async side's backpressure; the slot is held
///   until the answer is flushed, so a closing connection waits for the
///   save as for any request.
/// A frame that names a save but does not decode is a protocol error: the
/// async side answers it and closes, so nothing read after it is taken
/// here. Every other frame goes on to the async side unchanged.
final class SaveHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Frame
    typealias InboundOut = Frame
    /// Whole wire frames.
    typealias OutboundOut = ByteBuffer

    /// `ClientFrame.save`'s field number (`Protocol/strata.proto`).
    static let saveField: UInt64 = 14
    /// The largest frame decoded on the loop.
    static let maximumFrameBytes = 64 * 1024
    static let operationName = Session.operationName(.save(Strata_V1_SaveRequest()))

    private let core: ServerCore
    /// This handler's requests' figures.
    private let recorder: ServerStats.OperationRecorder
    private let state: ConnectionState
    private let maxFrameBytes: Int
    private let logger: Logger
    /// How saves come back to this connection's loop, and how their answers
    /// are flushed (one flush per connection and commit group).
    private let batch: EventLoopCompletionBatch

    init(core: ServerCore, state: ConnectionState, maxFrameBytes: Int, logger: Logger, batch: EventLoopCompletionBatch) {
        self.core = core
        recorder = core.stats.recorder(for: Self.operationName)
        self.state = state
        self.maxFrameBytes = maxFrameBytes
        self.logger = logger
        self.batch = batch
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if state.answersOnEventLoop, context.channel.isWritable, start(frame, context: context) { return }
        context.fireChannelRead(data)
    }

    /// Starts the save `frame` asks, its answer to be written through
    /// `context` (whose handler sits where this one would); false, having
    /// started nothing, when the frame is not one this handler takes (it
    /// then goes on to the async side). For
    /// a caller that has checked that the connection answers on the loop
    /// and is writable (``EventLoopRequestHandler``).
    func start(_ frame: Frame, context: ChannelHandlerContext) -> Bool {
        guard !frame.compressed, frame.payload.readableBytes <= Self.maximumFrameBytes,
              CachedGetHandler.topLevel(frame.payload, has: Self.saveField) == true,
              state.limiter.tryAcquire() else { return false }
        // The common save, inserts only from a caller bound by no rules,
        // is read straight into the coordinator's request; other saves of
        // inserts by their fields; anything else is decoded in full, which
        // also finds frames that are not protobuf.
        if state.policy == nil, core.savesWithoutTasks,
           let scan = InsertSaveScan(scanning: frame.payload, core: core, clientName: state.clientName, identity: state.identity) {
            guard scan.requestID != 0 else {
                state.limiter.release()
                return false
            }
            state.activity.touch()
            Self.start(scan, core: core, recorder: recorder, state: state, maxFrameBytes: maxFrameBytes, logger: logger,
                       reply: NIOLoopBound(context, eventLoop: context.eventLoop), batch: batch)
            return true
        }
        let requestID: UInt64
        let save: Strata_V1_SaveRequest
        if let scan = SaveFrameScan(scanning: frame.payload) {
            (requestID, save) = (scan.requestID, scan.save)
        } else {
            guard let request = try? Strata_V1_ClientFrame(serializedBytes: ProtobufBytes(frame.payload)) else {
                // The async side answers it with a protocol error and closes.
                state.limiter.release()
                state.stopReading(.protocolError)
                return false
            }
            guard case .save(let decoded)? = request.request else {
                state.limiter.release()
                return false
            }
            (requestID, save) = (request.requestID, decoded)
        }
        guard requestID != 0 else {
            state.limiter.release()
            return false
        }
        state.activity.touch()
        Self.start(save, requestID: requestID, core: core, recorder: recorder, state: state, maxFrameBytes: maxFrameBytes, logger: logger,
                   reply: NIOLoopBound(context, eventLoop: context.eventLoop), batch: batch)
        return true
    }

    /// Starts a save read straight into the coordinator's request (a
    /// caller bound by no access rules, every store taking saves with a
    /// completion handler): checked here, written by the store's writer
    /// and answered back on this loop with the rest of its commit group,
    /// with no task.
    private static func start(_ scan: InsertSaveScan, core: ServerCore, recorder: ServerStats.OperationRecorder, state: ConnectionState, maxFrameBytes: Int, logger: Logger,
                              reply: NIOLoopBound<ChannelHandlerContext>, batch: EventLoopCompletionBatch) {
        let started = ContinuousClock.now
        let span = Session.startSpan(core.tracer, operation: operationName, requestID: scan.requestID, entity: Session.entity(of: scan.save))
        let finish = finisher(names: scan.names, requestID: scan.requestID, started: started, span: span, core: core, recorder: recorder, state: state,
                              maxFrameBytes: maxFrameBytes, logger: logger, reply: reply, batch: batch)
        core.startSave(scan, handingBackTo: batch, completion: finish)
    }

    /// Starts a decoded save and queues its answer on the loop. When every
    /// store takes saves with a completion handler, a caller bound by no
    /// access rules goes through ``ServerCore/startSave(_:clientName:identity:handingBackTo:completion:)``
    /// as a scanned save does; any other save runs in a task of its own (a
    /// rule-bound caller's rules are checked against the stores first).
    private static func start(_ save: Strata_V1_SaveRequest, requestID: UInt64, core: ServerCore, recorder: ServerStats.OperationRecorder, state: ConnectionState, maxFrameBytes: Int,
                              logger: Logger, reply: NIOLoopBound<ChannelHandlerContext>, batch: EventLoopCompletionBatch) {
        let started = ContinuousClock.now
        let span = Session.startSpan(core.tracer, operation: operationName, requestID: requestID, request: .save(save))
        let finish = finisher(names: save.inserts.map(\.temporaryID), requestID: requestID, started: started, span: span, core: core, recorder: recorder, state: state,
                              maxFrameBytes: maxFrameBytes, logger: logger, reply: reply, batch: batch)
        let policy = state.policy
        if policy == nil, core.savesWithoutTasks {
            core.startSave(save, clientName: state.clientName, identity: state.identity, handingBackTo: batch, completion: finish)
            return
        }
        let clientName = state.clientName
        let identity = state.identity
        Task {
            do {
                finish(.success(try await core.saveOutcome(save, clientName: clientName, identity: identity, policy: policy)))
            } catch {
                finish(.failure(error))
            }
        }
    }

    /// What a save's outcome is handed to: it encodes the answer where the
    /// save ends (on the loop for a direct insert, in the task otherwise),
    /// ends the span, records the request and queues the answer on the loop.
    private static func finisher(names: [String], requestID: UInt64, started: ContinuousClock.Instant, span: any Span, core: ServerCore, recorder: ServerStats.OperationRecorder,
                                 state: ConnectionState, maxFrameBytes: Int, logger: Logger, reply: NIOLoopBound<ChannelHandlerContext>,
                                 batch: EventLoopCompletionBatch) -> @Sendable (Result<SaveOutcome, any Error>) -> Void {
        { result in
            let written = answer(names: names, requestID: requestID, result: result, state: state, maxFrameBytes: maxFrameBytes,
                                 redactor: core.redactor, logger: logger, span: span)
            span.end()
            recorder.record(duration: .now - started, failed: written.failed)
            // The slot is given back once the answer is flushed (or, with
            // no answer, at once): a closing connection, which waits for
            // its slots, writes it first.
            guard written.buffer.readableBytes > 0 else { return state.limiter.release() }
            let buffer = written.buffer
            if batch.eventLoop.inEventLoop {
                batch.write(buffer, to: reply.value, releasing: state.limiter)
            } else {
                batch.submit { batch.write(buffer, to: reply.value, releasing: state.limiter) }
            }
        }
    }

    /// The answer frame to a save whose inserts the client named `names`: its response, or the refusal of its
    /// error (logged as the async side logs it); empty when not even the
    /// refusal could be encoded.
    private static func answer(names: [String], requestID: UInt64, result: Result<SaveOutcome, any Error>, state: ConnectionState,
                               maxFrameBytes: Int, redactor: PathRedactor, logger: Logger, span: any Span) -> (buffer: ByteBuffer, failed: Bool) {
        let error: any Error
        do {
            let outcome = try result.get()
            if let direct = SaveAnswerEncoding.frame(requestID: requestID, names: names, outcome: outcome,
                                                     compresses: state.compresses, maxFrameBytes: maxFrameBytes) {
                return (direct, false)
            }
            var answer = Strata_V1_ServerFrame()
            answer.requestID = requestID
            answer.response = .save(ServerCore.response(names: names, outcome: outcome))
            return (try ResponseWriter.framed(answer, compresses: state.compresses, maxFrameBytes: maxFrameBytes), false)
        } catch let caught {
            error = caught
        }
        var refusal = Strata_V1_ServerFrame()
        refusal.requestID = requestID
        refusal.status = Session.failureStatus(error, operation: operationName, requestID: requestID, redactor: redactor, logger: logger)
        Session.failed(span, status: refusal.status)
        return ((try? ResponseWriter.framed(refusal, compresses: state.compresses, maxFrameBytes: maxFrameBytes)) ?? ByteBuffer(), true)
    }
}
