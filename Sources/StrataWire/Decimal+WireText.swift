import Foundation

extension Decimal {
    /// The decimal's text as the wire carries it: exactly `description`
    /// (digits, a '.' when the exponent is negative, a leading '-'), made
    /// without Foundation's digit-by-digit long division when the
    /// significand fits in 64 bits, which is nearly always (prices,
    /// quantities). Answering a fetch formats every decimal of every row,
    /// and `description` was the largest cost of encoding one.
    ///
    /// The significand is read from the value's memory, whose layout
    /// swift-foundation does not publish: ``Decimal/CompactLayout`` checks
    /// the layout against `description` once per process, and when it does
    /// not hold (another Foundation) every decimal goes through
    /// `description`.
    public var wireText: String {
        guard CompactLayout.holds, let compact = CompactLayout(self) else { return description }
        return compact.text
    }

    /// A decimal whose significand fits in 64 bits, read from its memory
    /// as swift-foundation lays it out: byte 0 the exponent (Int8); byte 1
    /// the length in 16-bit words (high nibble), negative (bit 3) and
    /// compact (bit 2); bytes 4-19 the significand, eight little-endian
    /// 16-bit words.
    struct CompactLayout {
        let exponent: Int
        let isNegative: Bool
        let significand: UInt64

        /// Whether this process's `Decimal` has that layout: values of
        /// every shape read back to their `description`.
        static let holds: Bool = {
            guard MemoryLayout<Decimal>.size == 20 else { return false }
            let samples = ["0", "1", "-1", "12.5", "-0.05", "1e5", "65536", "0.001", "18446744073709551615",
                           "-98765.4321", "1234567890123.456789", "7e-20", "3e20"]
            for sample in samples {
                guard let decimal = Decimal(string: sample, locale: Locale(identifier: "en_US_POSIX")),
                      let compact = CompactLayout(decimal), compact.text == decimal.description else { return false }
            }
            return true
        }()

        /// Reads `decimal`; nil for NaN and for significands wider than
        /// 64 bits.
        init?(_ decimal: Decimal) {
            guard !decimal.isNaN else { return nil }
            let read: (Int8, UInt8, UInt64, UInt64)? = withUnsafeBytes(of: decimal) { memory in
                guard memory.count == 20 else { return nil }
                return (memory.load(fromByteOffset: 0, as: Int8.self), memory.load(fromByteOffset: 1, as: UInt8.self),
                        memory.loadUnaligned(fromByteOffset: 4, as: UInt64.self),
                        memory.loadUnaligned(fromByteOffset: 12, as: UInt64.self))
            }
            guard let (exponent, flags, low, high) = read, high == 0, flags >> 4 <= 4 else { return nil }
            // Only the first `length` words count (as for `description`).
            let length = UInt64(flags >> 4)
            let mask: UInt64 = length >= 4 ? .max : (1 << (16 * length)) - 1
            self.exponent = Int(exponent)
            self.isNegative = flags & 0x08 != 0
            self.significand = UInt64(littleEndian: low) & mask
        }

        /// `description`'s text: "0" for zero; otherwise the digits, with
        /// zeros after them for a positive exponent, or a '.' (and "0." and
        /// zeros before them when they are all fraction) for a negative one.
        var text: String {
            if significand == 0 { return "0" }
            var digits = 0
            var rest = significand
            repeat {
                digits += 1
                rest /= 10
            } while rest > 0
            let fraction = max(0, -exponent)
            let leadingZeros = fraction >= digits ? fraction - digits + 1 : 0   // "0." and zeros
            let trailingZeros = max(0, exponent)
            let count = (isNegative ? 1 : 0) + leadingZeros + digits + trailingZeros + (fraction > 0 ? 1 : 0)
            return String(unsafeUninitializedCapacity: count) { text in
                var end = count
                for _ in 0..<trailingZeros {
                    end -= 1
                    text[end] = UInt8(ascii: "0")
                }
                var rest = significand
                var written = 0
                // Digits from the last, with the point after `fraction` of them.
                while rest > 0 || written < fraction + 1 {
                    if fraction > 0, written == fraction {
                        end -= 1
                        text[end] = UInt8(ascii: ".")
                    }
                    end -= 1
                    text[end] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                    written += 1
                }
                if isNegative {
                    end -= 1
                    text[end] = UInt8(ascii: "-")
                }
                return count
            }
        }
    }
}
