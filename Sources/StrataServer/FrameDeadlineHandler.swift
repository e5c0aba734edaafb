import NIOCore
import StrataWire

/// Closes a connection whose frame arrives too slowly. It sits before the
/// frame decoder and follows the frame boundaries in the bytes going by
/// (five header bytes, then the announced payload): from a frame's first
/// byte, the whole frame must arrive within ``timeout`` plus one second
/// per MiB of payload. Otherwise it writes one DEADLINE_EXCEEDED status
/// frame (request 0) and closes, as for other protocol errors. A client
/// that sends nothing is the idle timeout's concern.
///
/// A timer is armed only when a read ends inside a frame: frames that
/// arrive whole in one read (nearly all) cost a few comparisons.
final class FrameDeadlineHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    /// Header bytes of the current frame seen so far (0...5).
    private var headerBytes: [UInt8] = []
    /// Payload bytes of the current frame still to come.
    private var payloadLeft = 0
    /// When the current (incomplete) frame's first byte arrived, and how
    /// long it may take; nil between frames.
    private var frameDeadline: NIODeadline?
    /// Frames begun so far: tells the timer whether its frame is still the current one.
    private var framesBegun = 0
    private var timer: Scheduled<Void>?
    /// The frame the timer was armed for.
    private var timerFrame = 0

    init(timeout: Duration) {
        let parts = timeout.components
        self.timeout = .nanoseconds(parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        follow(bytes.readableBytesView, loop: context.eventLoop)
        if let deadline = frameDeadline {
            if timer == nil || timerFrame != framesBegun { arm(at: deadline, context: context) }
        } else if let armed = timer {
            armed.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    /// Advances through the frames in `bytes`, noting when each starts.
    private func follow(_ bytes: ByteBufferView, loop: any EventLoop) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if payloadLeft > 0 {
                let taken = min(payloadLeft, bytes.endIndex - index)
                payloadLeft -= taken
                index += taken
            } else {
                if headerBytes.isEmpty {
                    framesBegun += 1
                    frameDeadline = loop.now + timeout
                }
                headerBytes.append(bytes[index])
                index += 1
                if headerBytes.count == WireProtocol.headerSize {
                    let length = headerBytes[1...4].reduce(0) { $0 << 8 | Int($1) }
                    headerBytes.removeAll(keepingCapacity: true)
                    payloadLeft = length
                    // A large payload gets a second more per MiB.
                    if length >= 1 << 20, let deadline = frameDeadline {
                        frameDeadline = deadline + .seconds(Int64(length >> 20))
                    }
                }
            }
            if payloadLeft == 0, headerBytes.isEmpty { frameDeadline = nil }
        }
    }

    private func arm(at deadline: NIODeadline, context: ChannelHandlerContext) {
        timer?.cancel()
        timerFrame = framesBegun
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            handler.value.expire(loopBound.value)
        }
    }

    /// The timer fired: the frame it was armed for is still incomplete.
    private func expire(_ context: ChannelHandlerContext) {
        timer = nil
        guard let deadline = frameDeadline, timerFrame == framesBegun else { return }
        if deadline > context.eventLoop.now {
            // A large payload's header moved the deadline on.
            arm(at: deadline, context: context)
            return
        }
        let status = WireError(.deadlineExceeded, "a frame did not arrive within \(timeout.nanoseconds / 1_000_000) ms of its first byte: closing").status
        var frame = Strata_V1_ServerFrame()
        frame.status = status
        if let payload = try? frame.serializedBytes() as [UInt8] {
            var out = context.channel.allocator.buffer(capacity: WireProtocol.headerSize + payload.count)
            out.writeInteger(UInt8(0))
            out.writeInteger(UInt32(payload.count))
            out.writeBytes(payload)
            context.writeAndFlush(NIOAny(out), promise: nil)
        }
        context.close(promise: nil)
    }
}
