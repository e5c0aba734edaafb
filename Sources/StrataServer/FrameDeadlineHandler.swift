import NIOCore
import StrataWire

/// Closes a connection whose frame arrives too slowly. It sits before the
/// frame decoder and follows the frame boundaries in the bytes going by
/// (five header bytes, then the announced payload): from a frame's first
/// byte, the whole frame must arrive within ``timeout`` plus one second
/// per MiB of payload. Otherwise it writes one DEADLINE_EXCEEDED status
/// frame (request 0) and closes, as for other protocol errors. A client
/// that sends nothing is the idle timeout's concern.
final class FrameDeadlineHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    /// Header bytes of the current frame seen so far (0...5).
    private var headerBytes: [UInt8] = []
    /// Payload bytes of the current frame still to come.
    private var payloadLeft = 0
    private var deadline: Scheduled<Void>?

    init(timeout: Duration) {
        let parts = timeout.components
        self.timeout = .nanoseconds(parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        follow(bytes.readableBytesView, context: context)
        context.fireChannelRead(data)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }

    /// Advances through the frames in `bytes`, arming the deadline when a
    /// frame starts and disarming it when one ends on a boundary.
    private func follow(_ bytes: ByteBufferView, context: ChannelHandlerContext) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if payloadLeft > 0 {
                let taken = min(payloadLeft, bytes.endIndex - index)
                payloadLeft -= taken
                index += taken
            } else {
                if headerBytes.isEmpty { arm(context: context, extraSeconds: 0) }
                headerBytes.append(bytes[index])
                index += 1
                if headerBytes.count == WireProtocol.headerSize {
                    let length = headerBytes[1...4].reduce(0) { $0 << 8 | Int($1) }
                    headerBytes.removeAll(keepingCapacity: true)
                    payloadLeft = length
                    // A large payload gets a second more per MiB.
                    if length >= 1 << 20 { arm(context: context, extraSeconds: Int64(length >> 20)) }
                }
            }
            if payloadLeft == 0, headerBytes.isEmpty {
                deadline?.cancel()
                deadline = nil
            }
        }
    }

    private func arm(context: ChannelHandlerContext, extraSeconds: Int64) {
        deadline?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let timeout = self.timeout + .seconds(extraSeconds)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            let context = loopBound.value
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
}
