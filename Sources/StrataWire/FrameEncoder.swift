import NIOCore

/// Writes frames: the flag byte, the 4-byte big-endian length, the payload
/// (deflated first when the frame asks for compression).
public struct FrameEncoder: MessageToByteEncoder, Sendable {
    /// The frame to write.
    public typealias OutboundIn = Frame

    /// Creates an encoder.
    public init() {}

    /// Encodes one frame into `out`; a payload over 4 GiB - 1 (the length
    /// field's range) throws instead of being written.
    public func encode(data: Frame, out: inout ByteBuffer) throws {
        guard data.payload.readableBytes <= Int(UInt32.max) else {
            throw WireError(.resourceExhausted, "a frame of \(data.payload.readableBytes) bytes does not fit the 4-byte length field")
        }
        Self.write(data, into: &out)
    }

    /// Encodes one frame into `out` (also for clients and tests without a
    /// pipeline). The payload must fit the 4-byte length field (callers
    /// check it against their frame limit, which is far below).
    public static func write(_ frame: Frame, into out: inout ByteBuffer) {
        if frame.compressed, let deflated = try? Zlib.deflate(frame.payload) {
            out.writeInteger(WireProtocol.compressedFlag)
            out.writeInteger(UInt32(clamping: deflated.readableBytes))
            out.writeImmutableBuffer(deflated)
        } else {
            var payload = frame.payload
            out.writeInteger(UInt8(0))
            out.writeInteger(UInt32(clamping: payload.readableBytes))
            out.writeBuffer(&payload)
        }
    }
}
