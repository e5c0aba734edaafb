import Foundation

/// Fast access to a `Decimal`'s sign, exponent and mantissa digits.
///
/// Foundation keeps these internal on Linux, and `description` is slow
/// (microseconds, it writes out every zero of a large exponent). This reads
/// the value's 20 bytes (`exponent: Int8`, `length:4 | isNegative:1 |
/// isCompact:1 | reserved` bits, reserved, then eight little-endian 16-bit
/// mantissa words) — but only after ``isVerified`` has checked, once per
/// process, that this reading agrees with the `description`-based one on a
/// set of probe values. If Foundation's layout ever changes, the check fails
/// and ``DecimalKey`` silently uses the slow, layout-free path.
enum DecimalLayout {
    /// Whether the byte layout read by ``read(_:)`` matches this Foundation.
    static let isVerified: Bool = {
        guard MemoryLayout<Decimal>.size == 20 else { return false }
        let probes = [
            "0.0001", "-12.3400", "1", "-1", "65535", "65536", "4294967296",
            "340282366920938463463374607431768211455", "-1e-120", "1e120",
            "123456789012345678901234567890.12345678", "-0.000000000000000000000000000000000000000000007",
            "9999999999999999999999999999999999999e-128", "7e127",
        ]
        for text in probes {
            guard let value = Decimal(string: text, locale: nil), let raw = read(value),
                  let expected = DecimalKey.textParts(of: value) else { return false }
            var leading = 0
            while leading < raw.digits.count, raw.digits[leading] == UInt8(ascii: "0") { leading += 1 }
            var end = raw.digits.count
            while end > leading, raw.digits[end - 1] == UInt8(ascii: "0") { end -= 1 }
            let digits = Array(raw.digits[leading..<end])
            let exponent = raw.exponent + (raw.digits.count - leading)
            guard raw.negative == expected.negative, digits == expected.digits, exponent == expected.exponent else {
                return false
            }
        }
        return true
    }()

    /// Sign, exponent and ASCII mantissa digits (most significant first,
    /// no leading zeros) of a finite, non-zero value: `±digits × 10^exponent`.
    static func read(_ value: Decimal) -> (negative: Bool, exponent: Int, digits: [UInt8])? {
        withUnsafeBytes(of: value) { raw -> (negative: Bool, exponent: Int, digits: [UInt8])? in
            guard raw.count == 20 else { return nil }
            let exponent = Int(Int8(bitPattern: raw[0]))
            let flags = raw[1]
            let length = Int(flags >> 4)
            let negative = flags & 0b0000_1000 != 0
            guard length > 0, length <= 8 else { return nil }
            if length <= 4 {
                // Fits a UInt64 (every price, count and most amounts):
                // no word array, no base-10000 long division.
                var mantissa: UInt64 = 0
                for i in stride(from: length - 1, through: 0, by: -1) {
                    mantissa = mantissa << 16 | UInt64(raw[4 + 2 * i]) | UInt64(raw[5 + 2 * i]) << 8
                }
                return (negative, exponent, digits(of: mantissa))
            }
            var words = [UInt16](repeating: 0, count: length)
            for i in 0..<length {
                words[i] = UInt16(raw[4 + 2 * i]) | UInt16(raw[5 + 2 * i]) << 8
            }
            return (negative, exponent, digits(ofLittleEndianWords: words))
        }
    }

    /// Base-10 digits of `value`, most significant first; `"0"` for zero
    /// (as ``digits(ofLittleEndianWords:)`` writes them).
    private static func digits(of value: UInt64) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(20)
        var rest = value
        repeat {
            result.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        result.reverse()
        return result
    }

    /// Base-10 digits of an unsigned multi-word integer (little-endian
    /// 16-bit words), most significant first; `"0"` for zero.
    private static func digits(ofLittleEndianWords input: [UInt16]) -> [UInt8] {
        var words = input
        var top = words.count
        while top > 0, words[top - 1] == 0 { top -= 1 }
        var chunks: [UInt32] = []   // base 10_000, least significant first
        while top > 0 {
            var remainder: UInt32 = 0
            var i = top - 1
            while true {
                let current = remainder << 16 | UInt32(words[i])
                words[i] = UInt16(current / 10_000)
                remainder = current % 10_000
                if i == 0 { break }
                i -= 1
            }
            chunks.append(remainder)
            while top > 0, words[top - 1] == 0 { top -= 1 }
        }
        guard let last = chunks.last else { return [UInt8(ascii: "0")] }
        var result: [UInt8] = []
        result.reserveCapacity(chunks.count * 4)
        result.append(contentsOf: String(last).utf8)
        for chunk in chunks.dropLast().reversed() {
            result.append(UInt8(ascii: "0") + UInt8(chunk / 1000))
            result.append(UInt8(ascii: "0") + UInt8(chunk / 100 % 10))
            result.append(UInt8(ascii: "0") + UInt8(chunk / 10 % 10))
            result.append(UInt8(ascii: "0") + UInt8(chunk % 10))
        }
        return result
    }
}
