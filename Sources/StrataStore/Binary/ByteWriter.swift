import Foundation

/// Appends the primitive encodings of the binary store format: fixed-width
/// little-endian integers, LEB128 varints (zigzag for signed values),
/// length-prefixed UTF-8 strings and byte strings.
struct ByteWriter {
    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []

    /// One byte.
    mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// A flag as one byte, 0 or 1.
    mutating func flag(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// A 32-bit little-endian integer.
    mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// A 64-bit little-endian integer.
    mutating func uint64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// An unsigned LEB128 varint.
    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// A count or length.
    mutating func count(_ value: Int) { varint(UInt64(max(0, value))) }

    /// A signed integer, zigzag-encoded as a varint.
    mutating func signed(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// A Double by its bit pattern.
    mutating func double(_ value: Double) { uint64(value.bitPattern) }

    /// A length-prefixed UTF-8 string.
    mutating func string(_ value: String) {
        count(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    /// An optional string: a flag, then the string when present.
    mutating func optionalString(_ value: String?) {
        flag(value != nil)
        if let value { string(value) }
    }

    /// A length-prefixed byte string.
    mutating func data<C: Collection>(_ value: C) where C.Element == UInt8 {
        count(value.count)
        bytes.append(contentsOf: value)
    }

    /// Raw bytes, no length.
    mutating func raw<C: Collection>(_ value: C) where C.Element == UInt8 {
        bytes.append(contentsOf: value)
    }
}
