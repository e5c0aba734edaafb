import NIOCore

/// The top-level fields of a `ServerFrame` that route and count an answer:
/// which request, its status code, whether more frames follow. Read by
/// scanning the protobuf fields and skipping the response body, for a
/// reader that does not need the body (a load generator counting answers
/// should not pay for decoding every object into messages and maps).
public struct ServerFrameHeader: Sendable, Equatable {
    /// `request_id` (field 1); 0 for notifications.
    public var requestID: UInt64 = 0
    /// `status.code` (field 2, its field 1); `.ok` when absent.
    public var code: Strata_V1_StatusCode = .ok
    /// `more_follows` (field 3).
    public var moreFollows = false

    /// Scans a `ServerFrame` payload; nil when it is not a well-formed
    /// protobuf message (a truncated varint or field, a reserved wire type).
    public init?(scanning payload: ByteBuffer) {
        let scanned: ServerFrameHeader? = payload.withUnsafeReadableBytes { bytes in
            var header = ServerFrameHeader()
            var reader = Reader(bytes: bytes)
            while !reader.isAtEnd {
                guard let key = reader.varint() else { return nil }
                let (field, wireType) = (key >> 3, key & 7)
                switch (field, wireType) {
                case (1, 0):
                    guard let value = reader.varint() else { return nil }
                    header.requestID = value
                case (2, 2):
                    guard let length = reader.varint(), var status = reader.slice(length) else { return nil }
                    while !status.isAtEnd {
                        guard let statusKey = status.varint() else { return nil }
                        if statusKey == (1 << 3) {
                            guard let code = status.varint() else { return nil }
                            header.code = Strata_V1_StatusCode(rawValue: Int(truncatingIfNeeded: code)) ?? .unknown
                        } else if !status.skip(wireType: statusKey & 7) {
                            return nil
                        }
                    }
                case (3, 0):
                    guard let value = reader.varint() else { return nil }
                    header.moreFollows = value != 0
                default:
                    guard reader.skip(wireType: wireType) else { return nil }
                }
            }
            return header
        }
        guard let scanned else { return nil }
        self = scanned
    }

    /// A header with these fields.
    public init(requestID: UInt64 = 0, code: Strata_V1_StatusCode = .ok, moreFollows: Bool = false) {
        self.requestID = requestID
        self.code = code
        self.moreFollows = moreFollows
    }

    /// A bounds-checked cursor over protobuf bytes.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        var end: Int

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            self.end = bytes.count
        }

        var isAtEnd: Bool { offset >= end }

        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < end, shift < 64 {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }

        /// The next `length` bytes as their own reader, consumed here.
        mutating func slice(_ length: UInt64) -> Reader? {
            guard length <= UInt64(end - offset) else { return nil }
            var inner = self
            inner.end = offset + Int(length)
            offset = inner.end
            return inner
        }

        /// Skips a field's value of this wire type; false when malformed.
        mutating func skip(wireType: UInt64) -> Bool {
            switch wireType {
            case 0: return varint() != nil
            case 1: return advance(8)
            case 2: return varint().map { slice($0) != nil } ?? false
            case 5: return advance(4)
            default: return false
            }
        }

        private mutating func advance(_ count: Int) -> Bool {
            guard end - offset >= count else { return false }
            offset += count
            return true
        }
    }
}
