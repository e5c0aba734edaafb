import Foundation

/// Reads what ``ByteWriter`` writes, never past the end: every read checks
/// the bytes left and fails with a ``BinaryCorruption`` naming the offset.
/// Counts are checked against the bytes left, so a corrupt count can never
/// make the reader allocate more than the file holds.
struct ByteReader {
    /// The whole file.
    let bytes: [UInt8]
    /// The next byte to read.
    private(set) var offset: Int
    /// Where reading must stop.
    let end: Int

    /// A reader of `bytes[start..<end]` (offsets stay those of the file).
    init(_ bytes: [UInt8], start: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = start
        self.end = min(end ?? bytes.count, bytes.count)
    }

    /// Bytes left to read.
    var remaining: Int { max(0, end - offset) }

    /// Whether everything was read.
    var isAtEnd: Bool { offset >= end }

    /// A failure at the current offset (or at `offset`).
    func corruption(_ reason: String, at offset: Int? = nil) -> BinaryCorruption {
        BinaryCorruption(offset: offset ?? self.offset, reason: reason)
    }

    private mutating func take(_ count: Int, _ what: String) throws(BinaryCorruption) -> Range<Int> {
        guard count >= 0, count <= remaining else {
            throw corruption("\(what) needs \(count) bytes, only \(remaining) left")
        }
        defer { offset += count }
        return offset..<(offset + count)
    }

    /// One byte.
    mutating func byte(_ what: String) throws(BinaryCorruption) -> UInt8 {
        bytes[try take(1, what).lowerBound]
    }

    /// A flag (0 or 1).
    mutating func flag(_ what: String) throws(BinaryCorruption) -> Bool {
        let start = offset
        switch try byte(what) {
        case 0: return false
        case 1: return true
        case let other: throw corruption("\(what) is \(other), expected 0 or 1", at: start)
        }
    }

    /// A 32-bit little-endian integer.
    mutating func uint32(_ what: String) throws(BinaryCorruption) -> UInt32 {
        let range = try take(4, what)
        var value: UInt32 = 0
        for (i, index) in range.enumerated() { value |= UInt32(bytes[index]) << UInt32(8 * i) }
        return value
    }

    /// A 64-bit little-endian integer.
    mutating func uint64(_ what: String) throws(BinaryCorruption) -> UInt64 {
        let range = try take(8, what)
        var value: UInt64 = 0
        for (i, index) in range.enumerated() { value |= UInt64(bytes[index]) << UInt64(8 * i) }
        return value
    }

    /// An unsigned LEB128 varint of at most 10 bytes.
    mutating func varint(_ what: String) throws(BinaryCorruption) -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try self.byte(what)
            if shift == 63, byte > 1 { throw corruption("\(what) overflows 64 bits", at: start) }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            if shift > 63 { throw corruption("\(what) is longer than 10 bytes", at: start) }
        }
    }

    /// A zigzag-encoded signed integer.
    mutating func signed(_ what: String) throws(BinaryCorruption) -> Int64 {
        let raw = try varint(what)
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A count of elements each at least `minimumSize` bytes long: never
    /// more than the bytes left allow.
    mutating func count(_ what: String, minimumSize: Int = 1) throws(BinaryCorruption) -> Int {
        let start = offset
        let raw = try varint(what)
        let limit = remaining / max(1, minimumSize)
        guard raw <= UInt64(limit) else {
            throw corruption("\(what) is \(raw), but only \(remaining) bytes are left", at: start)
        }
        return Int(raw)
    }

    /// A Double by its bit pattern.
    mutating func double(_ what: String) throws(BinaryCorruption) -> Double {
        Double(bitPattern: try uint64(what))
    }

    /// A length-prefixed UTF-8 string (valid UTF-8 required).
    mutating func string(_ what: String) throws(BinaryCorruption) -> String {
        let start = offset
        let length = try count("length of \(what)")
        let range = try take(length, what)
        guard let text = String(validating: bytes[range], as: UTF8.self) else {
            throw corruption("\(what) is not valid UTF-8", at: start)
        }
        return text
    }

    /// An optional string (flag, then the string).
    mutating func optionalString(_ what: String) throws(BinaryCorruption) -> String? {
        try flag("presence of \(what)") ? try string(what) : nil
    }

    /// A length-prefixed byte string.
    mutating func data(_ what: String) throws(BinaryCorruption) -> Data {
        let length = try count("length of \(what)")
        return Data(bytes[try take(length, what)])
    }

    /// Exactly `count` raw bytes.
    mutating func raw(_ count: Int, _ what: String) throws(BinaryCorruption) -> [UInt8] {
        Array(bytes[try take(count, what)])
    }
}
