import NIOCore

/// Splits the byte stream into frames: a flag byte, a 4-byte big-endian
/// length, the payload. Refuses unknown flag bits, lengths over the limit
/// and compressed payloads that inflate past it, naming the byte offset of
/// the offending frame in the connection's stream.
public struct FrameDecoder: NIOSingleStepByteToMessageDecoder {
    /// The decoded frame.
    public typealias InboundOut = Frame

    /// The largest payload accepted, compressed and inflated, when no
    /// shared ``FrameLimit`` is given.
    public let maxFrameBytes: Int
    /// A limit that may change while the connection runs (a server's is
    /// small until the hello is accepted); nil: `maxFrameBytes` always.
    private let limit: FrameLimit?
    /// Bytes of the stream consumed by complete frames so far.
    private var offset: Int = 0

    /// Creates a decoder with a fixed payload limit.
    public init(maxFrameBytes: Int = WireProtocol.defaultMaxFrameBytes) {
        self.maxFrameBytes = maxFrameBytes
        self.limit = nil
    }

    /// Creates a decoder whose payload limit is `limit`'s current value,
    /// read as each frame's header arrives.
    public init(limit: FrameLimit) {
        self.maxFrameBytes = limit.current
        self.limit = limit
    }

    /// Decodes one frame when enough bytes have arrived.
    public mutating func decode(buffer: inout ByteBuffer) throws -> Frame? {
        guard let flags = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
              let length = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt32.self) else {
            return nil
        }
        guard flags & ~WireProtocol.compressedFlag == 0 else {
            throw WireError(.invalidArgument, "frame at byte offset \(offset): unknown flag bits 0x\(String(flags, radix: 16)) (only bit 0, compression, is defined)")
        }
        let maxFrameBytes = limit?.current ?? self.maxFrameBytes
        guard Int(length) <= maxFrameBytes else {
            throw WireError(.resourceExhausted, "frame at byte offset \(offset): payload of \(length) bytes exceeds the limit of \(maxFrameBytes) bytes")
        }
        guard buffer.readableBytes >= WireProtocol.headerSize + Int(length) else {
            return nil
        }
        buffer.moveReaderIndex(forwardBy: WireProtocol.headerSize)
        guard let payload = buffer.readSlice(length: Int(length)) else { return nil }
        let frameOffset = offset
        offset += WireProtocol.headerSize + Int(length)
        guard flags & WireProtocol.compressedFlag != 0 else {
            return Frame(payload: payload, compressed: false)
        }
        do {
            let inflated = try Zlib.inflate(payload, limit: maxFrameBytes)
            return Frame(payload: inflated, compressed: true)
        } catch let error as WireError {
            throw WireError(error.code, "frame at byte offset \(frameOffset): \(error.message)")
        }
    }

    /// At end of stream a partial frame is an error.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> Frame? {
        if let frame = try decode(buffer: &buffer) { return frame }
        if buffer.readableBytes > 0 {
            throw WireError(.invalidArgument, "connection closed inside the frame at byte offset \(offset) (\(buffer.readableBytes) bytes of it received)")
        }
        return nil
    }
}
