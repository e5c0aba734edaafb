import NIOCore

/// One frame of the wire: gRPC's length-prefixed message. On the way in,
/// `payload` is already inflated; on the way out, ``compress`` asks the
/// encoder to deflate it.
public struct Frame: Sendable, Hashable {
    /// The protobuf payload (uncompressed).
    public var payload: ByteBuffer
    /// Whether the payload travelled (or should travel) zlib-compressed.
    public var compressed: Bool

    /// Creates a frame.
    public init(payload: ByteBuffer, compressed: Bool = false) {
        self.payload = payload
        self.compressed = compressed
    }
}
