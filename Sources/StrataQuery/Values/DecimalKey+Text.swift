/// A decimal's text written straight from its key, for readers that hand
/// stored decimals on as text (a fetch answer's rows): no `Decimal` made,
/// no `String`.
extension DecimalKey {
    /// Writes the plain-notation text of the decimal `key` encodes (what
    /// `Decimal.description` writes for it: `-12.34`, `0.005`, `1200`, `0`)
    /// into `buffer`; answers how many bytes, or nil (nothing to rely on in
    /// `buffer`) for a key that is not a well-formed key of at most 38
    /// significant digits, or whose text does not fit.
    public static func writeText(ofKey key: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9")
        guard let first = key.first else { return nil }
        if first == UInt8(ascii: "1") {
            guard key.count == 1, buffer.count >= 1 else { return nil }
            buffer[0] = zero
            return 1
        }
        let negative: Bool
        switch first {
        case UInt8(ascii: "2"): negative = false
        case zero: negative = true
        default: return nil
        }
        // Sign, three exponent digits, at least one digit, and "~" after a
        // negative's digits.
        let digitsEnd = negative ? key.count - 1 : key.count
        guard digitsEnd >= 5, !negative || key[key.count - 1] == UInt8(ascii: "~") else { return nil }
        var biased = 0
        for index in 1...3 {
            let byte = key[index]
            guard byte >= zero, byte <= nine else { return nil }
            biased = biased * 10 + Int(byte - zero)
        }
        let exponent = (negative ? 999 - biased : biased) - 500
        let count = digitsEnd - 4
        guard count <= 38 else { return nil }
        // Significant digits: no leading or trailing zero (a negative's are
        // complemented: 9 stands for 0).
        let digitZero = negative ? nine : zero
        guard key[4] != digitZero, key[digitsEnd - 1] != digitZero else { return nil }
        // "-", "0." and the zeros before the digits, the digits, the point
        // or the zeros after them.
        let length = (negative ? 1 : 0) + count + (exponent <= 0 ? 2 - exponent : (exponent < count ? 1 : exponent - count))
        guard length <= buffer.count else { return nil }
        var at = 0
        func put(_ byte: UInt8) {
            buffer[at] = byte
            at += 1
        }
        if negative { put(UInt8(ascii: "-")) }
        if exponent <= 0 {
            put(zero)
            put(UInt8(ascii: "."))
            for _ in 0..<(-exponent) { put(zero) }
        }
        for index in 0..<count {
            if exponent > 0, index == exponent { put(UInt8(ascii: ".")) }
            let byte = key[4 + index]
            guard byte >= zero, byte <= nine else { return nil }
            put(negative ? nine - (byte - zero) : byte)
        }
        if exponent > count {
            for _ in 0..<(exponent - count) { put(zero) }
        }
        return at
    }
}
