import NIOCore

/// Writes frames: the flag byte, the 4-byte big-endian length, the payload
/// (deflated first when the frame asks for compression).
public struct FrameEncoder: MessageToByteEncoder, Sendable {
    /// The frame to write.
    public typealias OutboundIn = Frame

    /// Creates an encoder.
    public init() {}

    /// Encodes one frame into `out`.
    public func encode(data: Frame, out: inout ByteBuffer) throws {
        Self.write(data, into: &out)
    }

    /// Encodes one frame into `out` (also for clients and tests without a pipeline).
    public static func write(_ frame: Frame, into out: inout ByteBuffer) {
        if frame.compressed, let deflated = try? Zlib.deflate(frame.payload) {
            out.writeInteger(WireProtocol.compressedFlag)
            out.writeInteger(UInt32(deflated.readableBytes))
            out.writeImmutableBuffer(deflated)
        } else {
            var payload = frame.payload
            out.writeInteger(UInt8(0))
            out.writeInteger(UInt32(payload.readableBytes))
            out.writeBuffer(&payload)
        }
    }
}
