import Foundation

/// A bounds-checked cursor over protobuf wire bytes, for the few messages
/// read on hot paths by their fields instead of decoded whole
/// (``ServerFrameHeader``, ``RefreshFrameScan``, ``SaveFrameScan``,
/// ``FetchFrameScan``). Every read returns nil (or false) instead of
/// reading past the end.
public struct ProtobufReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    private var end: Int

    /// A reader of `bytes`, valid while they are.
    public init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.end = bytes.count
    }

    /// Whether every byte was read.
    public var isAtEnd: Bool { offset >= end }

    /// The next varint (at most ten bytes).
    public mutating func varint() -> UInt64? {
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

    /// The next eight bytes as a little-endian integer (a `fixed64` or
    /// `double` field's value).
    public mutating func fixed64() -> UInt64? {
        guard end - offset >= 8 else { return nil }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    /// The next length-delimited field's bytes as their own reader.
    public mutating func delimited() -> ProtobufReader? {
        guard let length = varint() else { return nil }
        return slice(length)
    }

    /// The next length-delimited field as text; nil unless it is UTF-8
    /// (as protobuf's decoders refuse it).
    public mutating func text() -> String? {
        guard let field = delimited() else { return nil }
        return Self.text(field.remaining)
    }

    /// `bytes` as text; nil unless they are UTF-8. As `String(validating:as:)`,
    /// without its generic path (metadata lookups on every call): decoding
    /// replaces what is not UTF-8, so the text has exactly the given bytes
    /// only when they were valid.
    public static func text(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return "" }
        var text = bytes.withMemoryRebound(to: UInt8.self) { String(decoding: $0, as: UTF8.self) }
        let unchanged = text.withUTF8 { utf8 in
            guard utf8.count == bytes.count, let decoded = utf8.baseAddress else { return false }
            return memcmp(decoded, base, bytes.count) == 0
        }
        return unchanged ? text : nil
    }

    /// The next length-delimited field's bytes.
    public mutating func data() -> Data? {
        guard let field = delimited() else { return nil }
        return Data(field.remaining)
    }

    /// The next eight bytes as a `double`.
    public mutating func double() -> Double? {
        fixed64().map(Double.init(bitPattern:))
    }

    /// The next `length` bytes as their own reader, consumed here.
    public mutating func slice(_ length: UInt64) -> ProtobufReader? {
        guard length <= UInt64(end - offset) else { return nil }
        var inner = self
        inner.end = offset + Int(length)
        offset = inner.end
        return inner
    }

    /// The rest of this reader's bytes.
    public var remaining: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
    }

    /// Skips a field's value of this wire type; false when malformed (or
    /// a group, which proto3 messages do not use).
    public mutating func skip(wireType: UInt64) -> Bool {
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
