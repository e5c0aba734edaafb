import NIOCore

/// Sees a connection's bytes as they arrive and the reads sent toward its
/// socket, from its ``FrameDecodingHandler`` (the server's frame deadline,
/// which must know where frames begin and whether the server is reading).
/// Called on the channel's event loop only.
public protocol FrameArrivalObserver: AnyObject {
    /// Bytes arrived, before they are decoded.
    func bytesArrived(_ bytes: ByteBufferView, context: ChannelHandlerContext)
    /// A read goes toward the socket (the pipeline asked for more bytes).
    func readRequested(context: ChannelHandlerContext)
    /// The socket's current read burst ended.
    func readCompleted()
    /// The channel is going away: nothing more will be observed.
    func stop()
}
