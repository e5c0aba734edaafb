import NIOCore
import StrataWire

/// Closes a connection whose frame arrives too slowly. It watches the
/// connection's frame decoder (``FrameDecodingHandler``'s observer) and
/// follows the frame boundaries in the bytes arriving
/// (five header bytes, then the announced payload): from a frame's first
/// byte, the whole frame must arrive within ``timeout`` plus one second
/// per MiB of payload. Otherwise it writes one DEADLINE_EXCEEDED status
/// frame (request 0) and closes, as for other protocol errors. A client
/// that sends nothing is the idle timeout's concern.
///
/// Only a read that ends inside a frame reads the clock and arms a timer:
/// frames that arrive whole in one read (nearly all) cost a few
/// comparisons. A frame that begins in a read is taken to begin when that
/// read is handled.
///
/// Time the server itself does not read (backpressure: the connection has
/// its maximum of requests in flight, and the async side withholds
/// `read()`) does not count against the client: a deadline that passes
/// while no read is outstanding restarts when reading resumes.
final class FrameDeadline: FrameArrivalObserver {
    private let timeout: TimeAmount
    /// Header bytes of the current frame seen so far (0...5), and the
    /// announced length's bytes among them.
    private var headerSeen = 0
    private var lengthSoFar = 0
    /// Payload bytes of the current frame still to come.
    private var payloadLeft = 0
    /// When the current incomplete frame must be complete; nil between frames.
    private var frameDeadline: NIODeadline?
    /// Frames begun so far: tells the timer whether its frame is still the current one.
    private var framesBegun = 0
    private var timer: Scheduled<Void>?
    /// The frame the timer was armed for.
    private var timerFrame = 0
    /// Whether a `read()` has gone to the socket since the last read completed.
    private var readOutstanding = false
    /// The deadline passed while the server was not reading.
    private var expiredWhileNotReading = false

    init(timeout: Duration) {
        let parts = timeout.components
        self.timeout = .nanoseconds(parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000)
    }

    func bytesArrived(_ bytes: ByteBufferView, context: ChannelHandlerContext) {
        let begunBefore = framesBegun
        follow(bytes)
        if headerSeen > 0 || payloadLeft > 0 {
            // A read that ends inside a frame: its deadline, from when it began.
            if framesBegun != begunBefore || frameDeadline == nil {
                frameDeadline = context.eventLoop.now + timeout + Self.allowance(payloadLeft)
            }
            if let deadline = frameDeadline, timer == nil || timerFrame != framesBegun {
                arm(at: deadline, context: context)
            }
        } else {
            frameDeadline = nil
            if let armed = timer {
                armed.cancel()
                timer = nil
            }
        }
    }

    func readCompleted() {
        readOutstanding = false
    }

    func readRequested(context: ChannelHandlerContext) {
        readOutstanding = true
        if expiredWhileNotReading {
            // The server reads again: the frame's clock starts over.
            expiredWhileNotReading = false
            if headerSeen > 0 || payloadLeft > 0 {
                let deadline = context.eventLoop.now + timeout + Self.allowance(payloadLeft)
                frameDeadline = deadline
                arm(at: deadline, context: context)
            }
        }
    }

    func stop() {
        timer?.cancel()
        timer = nil
    }

    /// One second more per MiB of payload.
    private static func allowance(_ payload: Int) -> TimeAmount {
        .seconds(Int64(payload >> 20))
    }

    /// Advances through the frames in `bytes`.
    private func follow(_ bytes: ByteBufferView) {
        var index = bytes.startIndex
        let end = bytes.endIndex
        while index < end {
            if payloadLeft > 0 {
                let taken = min(payloadLeft, end - index)
                payloadLeft -= taken
                index += taken
                continue
            }
            if headerSeen == 0 {
                framesBegun += 1
                if end - index >= WireProtocol.headerSize {
                    // The whole header is here: its length at once.
                    payloadLeft = Int(bytes[index + 1]) << 24 | Int(bytes[index + 2]) << 16 | Int(bytes[index + 3]) << 8 | Int(bytes[index + 4])
                    index += WireProtocol.headerSize
                    continue
                }
            }
            // A header split across reads, byte by byte.
            if headerSeen > 0 { lengthSoFar = lengthSoFar << 8 | Int(bytes[index]) }
            headerSeen += 1
            index += 1
            if headerSeen == WireProtocol.headerSize {
                payloadLeft = lengthSoFar
                headerSeen = 0
                lengthSoFar = 0
                // The payload may be large: its allowance counts from now on.
                if let deadline = frameDeadline { frameDeadline = deadline + Self.allowance(payloadLeft) }
            }
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

    /// The timer fired: the frame it was armed for may still be incomplete.
    private func expire(_ context: ChannelHandlerContext) {
        timer = nil
        guard let deadline = frameDeadline, timerFrame == framesBegun else { return }
        if deadline > context.eventLoop.now {
            // A large payload's header moved the deadline on.
            arm(at: deadline, context: context)
            return
        }
        guard readOutstanding else {
            // The server is not reading: not the client's delay.
            expiredWhileNotReading = true
            return
        }
        let status = WireError(.deadlineExceeded, "a frame did not arrive within \(timeout.nanoseconds / 1_000_000) ms of its first byte: closing").status
        var frame = Strata_V1_ServerFrame()
        frame.status = status
        if let out = try? ResponseWriter.framed(frame, compresses: false, maxFrameBytes: .max) {
            context.writeAndFlush(NIOAny(out), promise: nil)
        }
        context.close(promise: nil)
    }
}
