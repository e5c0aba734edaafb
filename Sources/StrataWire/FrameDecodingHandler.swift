import NIOCore

/// Splits a connection's byte stream into frames with a ``FrameDecoder`` and
/// passes each on as a ``Frame``: what `ByteToMessageHandler(FrameDecoder())`
/// does, written for this one decoder.
///
/// NIO's general handler runs every read through a state machine and a
/// buffer of its own, made for decoders of any shape; for the server's
/// small requests that was about a fourteenth of a get's CPU. Here a read
/// that holds whole frames is decoded where it lies (each frame a slice of
/// it, no copy); only the bytes of a frame not yet complete are kept, and
/// the next read's bytes appended to them.
///
/// As NIO's handler does:
/// - a frame that fails to decode (unknown flags, over the limit, bad
///   zlib) is passed on as an error (`fireErrorCaught`), and nothing the
///   connection sends after it is decoded;
/// - at the end of the stream (the channel going inactive, or its input
///   closing) what is kept is decoded with ``FrameDecoder/decodeLast(buffer:seenEOF:)``:
///   a frame cut short there is an error naming its offset;
/// - bytes that reach it while it passes a frame on (a handler after it
///   reading more, re-entrantly) are decoded after that frame's, in order.
///
/// An ``FrameArrivalObserver`` (the server's frame deadline) sees the
/// bytes as they arrive and the reads going to the socket, from this one
/// handler rather than from one more in the pipeline, which every read,
/// write and flush would pass through.
public final class FrameDecodingHandler: ChannelDuplexHandler {
    /// Bytes as they arrive.
    public typealias InboundIn = ByteBuffer
    /// Whole frames.
    public typealias InboundOut = Frame
    /// Writes pass through unchanged.
    public typealias OutboundIn = ByteBuffer
    /// Writes pass through unchanged.
    public typealias OutboundOut = ByteBuffer

    private var decoder: FrameDecoder
    private let observer: (any FrameArrivalObserver)?
    /// The bytes of a frame not complete yet; nil when none are kept.
    private var pending: ByteBuffer?
    /// Set once a frame failed to decode or the stream ended: later bytes
    /// are dropped.
    private var stopped = false
    /// Set while frames are decoded and passed on.
    private var decoding = false

    /// The capacity of the buffer holding the bytes kept (for tests).
    var keptCapacity: Int { pending?.capacity ?? 0 }

    /// A handler decoding with `decoder`, its bytes and reads seen by
    /// `observer`.
    public init(_ decoder: FrameDecoder, observer: (any FrameArrivalObserver)? = nil) {
        self.decoder = decoder
        self.observer = observer
    }

    /// Decodes the frames `data` completes.
    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !stopped else { return }
        var bytes = unwrapInboundIn(data)
        observer?.bytesArrived(bytes.readableBytesView, context: context)
        if var kept = pending {
            pending = nil
            // The kept bytes moved to the front first: a stream whose
            // reads keep ending inside frames must not grow the buffer.
            kept.discardReadBytes()
            kept.writeBuffer(&bytes)
            pending = kept
        } else {
            pending = bytes
        }
        // Re-entered from a frame passed on: the running loop takes them.
        guard !decoding else { return }
        decodeFrames(context: context, atEnd: false)
    }

    /// At the end of input (half-closure) what is kept is decoded.
    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed? = event as? ChannelEvent { endOfStream(context: context) }
        context.fireUserInboundEventTriggered(event)
    }

    /// At the end of the connection what is kept is decoded.
    public func channelInactive(context: ChannelHandlerContext) {
        observer?.stop()
        endOfStream(context: context)
        context.fireChannelInactive()
    }

    /// Tells the observer that the socket's read burst ended.
    public func channelReadComplete(context: ChannelHandlerContext) {
        observer?.readCompleted()
        context.fireChannelReadComplete()
    }

    /// Tells the observer that a read goes toward the socket.
    public func read(context: ChannelHandlerContext) {
        observer?.readRequested(context: context)
        context.read()
    }

    /// Stops the observer.
    public func handlerRemoved(context: ChannelHandlerContext) {
        observer?.stop()
    }

    private func endOfStream(context: ChannelHandlerContext) {
        guard !stopped else { return }
        decodeFrames(context: context, atEnd: true)
        stopped = true
        pending = nil
    }

    /// Decodes and passes on every whole frame kept, then keeps the rest.
    private func decodeFrames(context: ChannelHandlerContext, atEnd: Bool) {
        decoding = true
        defer { decoding = false }
        while !stopped, var buffer = pending {
            // Taken out while decoding, so that the buffer is not shared
            // (nothing can append to it until a frame is passed on).
            pending = nil
            let frame: Frame?
            do {
                frame = atEnd ? try decoder.decodeLast(buffer: &buffer, seenEOF: true) : try decoder.decode(buffer: &buffer)
            } catch {
                stopped = true
                context.fireErrorCaught(error)
                return
            }
            if buffer.readableBytes > 0 { pending = buffer }
            guard let frame else { return }
            context.fireChannelRead(wrapInboundOut(frame))
        }
    }
}
