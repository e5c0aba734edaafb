/// A canonical, unambiguous byte encoding for hashing: every string is
/// length-prefixed UTF-8, every number big-endian, every optional tagged.
/// Two encodings are equal only if the values written were equal.
struct CanonicalEncoder {
    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []

    /// Appends a 32-bit big-endian length.
    mutating func writeLength(_ count: Int) {
        let value = UInt32(truncatingIfNeeded: count)
        bytes += [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                  UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    /// Appends a length-prefixed UTF-8 string.
    mutating func write(_ text: String) {
        let utf8 = Array(text.utf8)
        writeLength(utf8.count)
        bytes += utf8
    }

    /// Appends `0` for `nil`, else `1` and the string.
    mutating func write(_ text: String?) {
        if let text {
            bytes.append(1)
            write(text)
        } else {
            bytes.append(0)
        }
    }

    /// Appends one byte, `1` or `0`.
    mutating func write(_ flag: Bool) {
        bytes.append(flag ? 1 : 0)
    }

    /// Appends a 64-bit big-endian two's-complement integer.
    mutating func write(_ number: Int) {
        let value = UInt64(bitPattern: Int64(number))
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// Appends length-prefixed raw bytes.
    mutating func write(bytes raw: [UInt8]) {
        writeLength(raw.count)
        bytes += raw
    }
}
