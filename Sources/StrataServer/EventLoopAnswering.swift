import NIOCore
import StrataWire

/// A handler that answers some frames on the connection's event loop as
/// they are read (``CachedGetHandler``, ``FetchHandler``): the answer is
/// written at once and flushed when the read burst ends, so answers to
/// frames read together leave in one write; every other frame goes on
/// unchanged. Answering waits for the hello's answer
/// (``ConnectionState/answersOnEventLoop``) and for a writable socket.
protocol EventLoopAnswering: ChannelInboundHandler where InboundIn == Frame, InboundOut == Frame, OutboundOut == ByteBuffer {
    /// The connection's state.
    var state: ConnectionState { get }
    /// Whether an answer was written since the last flush.
    var needsFlush: Bool { get set }
    /// The whole answer frame to `frame`, or nil to pass it on.
    func answer(_ frame: Frame, allocator: ByteBufferAllocator) -> ByteBuffer?
    /// Called when a read burst ends (before the flush).
    func readBurstEnded()
}

extension EventLoopAnswering {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if state.answersOnEventLoop, context.channel.isWritable, let answer = answer(frame, allocator: context.channel.allocator) {
            state.activity.touch()
            context.write(wrapOutboundOut(answer), promise: nil)
            needsFlush = true
            return
        }
        context.fireChannelRead(data)
    }

    func readBurstEnded() {}

    func channelReadComplete(context: ChannelHandlerContext) {
        readBurstEnded()
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }
}
