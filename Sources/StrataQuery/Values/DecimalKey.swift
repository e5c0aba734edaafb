import Foundation

/// An order-preserving text encoding of `Decimal`, so that SQLite's plain
/// `=`, `<`, `ORDER BY`, `MIN`/`MAX` and indexes (all under the `BINARY`
/// collation) compare decimal columns exactly and numerically.
///
/// A value is first normalised to `±0.d₁d₂…dₙ × 10^e` with `d₁ ≠ 0` and no
/// trailing zeros (so equal numbers have equal keys, whatever their scale):
///
/// | value | key |
/// |---|---|
/// | zero | `"1"` |
/// | positive | `"2"` + `e + 500` on 3 digits + `d₁…dₙ` |
/// | negative | `"0"` + `999 − (e + 500)` on 3 digits + `(9−d₁)…(9−dₙ)` + `"~"` |
///
/// Byte order of keys is numeric order: a larger exponent means a larger
/// magnitude, digits then compare left to right, and for negatives the
/// complemented digits plus the `"~"` terminator (which sorts after every
/// digit) make `-0.5` (`"0…4~"`) sort after `-0.51` (`"0…48~"`).
public enum DecimalKey {
    /// The key of zero.
    public static let zero = "1"

    /// The key of `value`, or `nil` for NaN (which has no place in the order
    /// and is stored as SQL `NULL`).
    public static func encode(_ value: Decimal) -> String? {
        normalizedParts(of: value).map { encode($0) }
    }

    private static func encode(_ parts: (negative: Bool, exponent: Int, digits: [UInt8])) -> String {
        guard !parts.digits.isEmpty else { return zero }
        let biased = parts.exponent + 500
        var key: [UInt8] = []
        key.reserveCapacity(parts.digits.count + 5)
        if parts.negative {
            key.append(UInt8(ascii: "0"))
            appendThreeDigits(999 - biased, to: &key)
            for digit in parts.digits { key.append(UInt8(ascii: "9") - (digit - UInt8(ascii: "0"))) }
            key.append(UInt8(ascii: "~"))
        } else {
            key.append(UInt8(ascii: "2"))
            appendThreeDigits(biased, to: &key)
            key.append(contentsOf: parts.digits)
        }
        return String(decoding: key, as: UTF8.self)
    }

    /// The decimal a key encodes, or `nil` when `key` is not a well-formed key.
    public static func decode(_ key: String) -> Decimal? {
        if let value = decodeCompact(key) { return value }
        let bytes = Array(key.utf8)
        guard let first = bytes.first else { return nil }
        switch first {
        case UInt8(ascii: "1"):
            return bytes.count == 1 ? Decimal.zero : nil
        case UInt8(ascii: "2"):
            guard bytes.count >= 5, let biased = threeDigits(bytes[1...3]) else { return nil }
            let digits = bytes[4...]
            guard isCanonicalDigits(digits) else { return nil }
            return makeDecimal(negative: false, exponent: biased - 500, digits: Array(digits))
        case UInt8(ascii: "0"):
            guard bytes.count >= 6, bytes.last == UInt8(ascii: "~"),
                  let complemented = threeDigits(bytes[1...3]) else { return nil }
            let body = bytes[4..<(bytes.count - 1)]
            guard body.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            let digits = body.map { UInt8(ascii: "9") - ($0 - UInt8(ascii: "0")) }
            guard isCanonicalDigits(digits[...]) else { return nil }
            return makeDecimal(negative: true, exponent: (999 - complemented) - 500, digits: digits)
        default:
            return nil
        }
    }

    /// The key of a `Double` compared in the decimal domain: the Decimal of
    /// its shortest round-tripping text (`0.1` is exactly `0.1`), or `nil`
    /// for NaN, infinities and magnitudes Decimal cannot hold.
    public static func encode(_ value: Double) -> String? {
        DecimalConversion.decimal(from: value).flatMap { encode($0) }
    }

    /// The key of an integer compared in the decimal domain (always exact).
    public static func encode(_ value: Int64) -> String {
        if value == 0 { return zero }
        let digits = Array(String(value.magnitude).utf8)
        return encode(normalize(negative: value < 0, mantissaDigits: digits, exponent: 0))
    }

    // MARK: - Normalisation

    /// Sign, exponent `e` and significant ASCII digits of `±0.d₁…dₙ × 10^e`;
    /// empty digits for zero; `nil` for NaN.
    static func normalizedParts(of value: Decimal) -> (negative: Bool, exponent: Int, digits: [UInt8])? {
        if value.isNaN { return nil }
        if value.isZero { return (false, 0, []) }
        if DecimalLayout.isVerified, let raw = DecimalLayout.read(value) {
            return normalize(negative: raw.negative, mantissaDigits: raw.digits, exponent: raw.exponent)
        }
        return textParts(of: value)
    }

    /// ``normalizedParts(of:)`` through `description` (slow: it writes every
    /// zero of large exponents), used when ``DecimalLayout`` cannot be trusted.
    static func textParts(of value: Decimal) -> (negative: Bool, exponent: Int, digits: [UInt8])? {
        if value.isNaN { return nil }
        if value.isZero { return (false, 0, []) }
        // `description` is locale-independent plain notation: "-12.34", "0.0001", "1000".
        var negative = false
        var integerDigits = 0
        var fractionDigits = 0
        var seenPoint = false
        var digits: [UInt8] = []
        digits.reserveCapacity(40)
        for byte in value.description.utf8 {
            switch byte {
            case UInt8(ascii: "-"): negative = true
            case UInt8(ascii: "."): seenPoint = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits.append(byte)
                if seenPoint { fractionDigits += 1 } else { integerDigits += 1 }
            default: return nil
            }
        }
        return normalize(negative: negative, mantissaDigits: digits, exponent: -fractionDigits)
    }

    /// Normalises `±mantissaDigits × 10^exponent`.
    private static func normalize(negative: Bool, mantissaDigits digits: [UInt8], exponent: Int) -> (negative: Bool, exponent: Int, digits: [UInt8]) {
        var leadingZeros = 0
        while leadingZeros < digits.count, digits[leadingZeros] == UInt8(ascii: "0") { leadingZeros += 1 }
        guard leadingZeros < digits.count else { return (false, 0, []) }
        var end = digits.count
        while end > leadingZeros, digits[end - 1] == UInt8(ascii: "0") { end -= 1 }
        let significant = digits.count - leadingZeros
        return (negative, exponent + significant, Array(digits[leadingZeros..<end]))
    }

    private static func appendThreeDigits(_ value: Int, to key: inout [UInt8]) {
        let clamped = Swift.min(Swift.max(value, 0), 999)
        key.append(UInt8(ascii: "0") + UInt8(clamped / 100))
        key.append(UInt8(ascii: "0") + UInt8(clamped / 10 % 10))
        key.append(UInt8(ascii: "0") + UInt8(clamped % 10))
    }

    private static func threeDigits(_ bytes: ArraySlice<UInt8>) -> Int? {
        var result = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            result = result * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return result
    }

    private static func isCanonicalDigits(_ digits: ArraySlice<UInt8>) -> Bool {
        guard let first = digits.first, let last = digits.last,
              first != UInt8(ascii: "0"), last != UInt8(ascii: "0") else { return false }
        return digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// ``decode(_:)`` for well-formed keys of at most 18 digits, without
    /// going through text: the digits as a `UInt64` significand scaled by a
    /// power of ten. `nil` (the caller takes the general path) for any
    /// other key, or when ``isCompactDecodingVerified`` found that this
    /// Foundation builds such values differently from its parser.
    private static func decodeCompact(_ key: String) -> Decimal? {
        var utf8 = key.utf8.makeIterator()
        guard let first = utf8.next() else { return nil }
        let negative: Bool
        switch first {
        case UInt8(ascii: "2"): negative = false
        case UInt8(ascii: "0"): negative = true
        default: return nil
        }
        var biased = 0
        for _ in 0..<3 {
            guard let byte = utf8.next(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            biased = biased * 10 + Int(byte - UInt8(ascii: "0"))
        }
        var significand: UInt64 = 0
        var count = 0
        var lastDigit: UInt8 = 0
        var terminated = false
        while let byte = utf8.next() {
            if negative, byte == UInt8(ascii: "~") {
                terminated = true
                break
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), count < 18 else { return nil }
            var digit = byte - UInt8(ascii: "0")
            if negative { digit = 9 - digit }
            if count == 0, digit == 0 { return nil }
            significand = significand * 10 + UInt64(digit)
            lastDigit = digit
            count += 1
        }
        guard count > 0, lastDigit != 0, terminated == negative, utf8.next() == nil else { return nil }
        let exponent = (negative ? (999 - biased) : biased) - 500
        let scale = exponent - count
        guard scale >= -100, scale <= 100, isCompactDecodingVerified else { return nil }
        return compactDecimal(negative: negative, scale: scale, significand: significand)
    }

    private static func compactDecimal(negative: Bool, scale: Int, significand: UInt64) -> Decimal {
        Decimal(sign: negative ? .minus : .plus, exponent: scale, significand: Decimal(significand))
    }

    /// Whether ``compactDecimal(negative:scale:significand:)`` builds the
    /// very bytes the text path (``makeDecimal(negative:exponent:digits:)``)
    /// does, checked once per process on probe values.
    static let isCompactDecodingVerified: Bool = {
        let probes: [(Bool, Int, UInt64)] = [
            (false, -2, 1234), (false, -1, 125), (false, 2, 1), (false, -1, 5), (false, 0, 99), (true, -1, 125),
            (false, -14, 123_456_789_012_345_678), (true, 0, 999_999_999_999_999_999), (false, -100, 7), (false, 100, 3),
            (true, -3, 5), (false, 0, 65535), (false, 0, 65536), (false, -5, 4_294_967_296), (false, 19, 7),
        ]
        for (negative, scale, significand) in probes {
            let digits = Array(String(significand).utf8)
            guard let expected = makeDecimal(negative: negative, exponent: scale + digits.count, digits: digits) else { return false }
            let actual = compactDecimal(negative: negative, scale: scale, significand: significand)
            let same = withUnsafeBytes(of: expected) { e in withUnsafeBytes(of: actual) { a in e.elementsEqual(a) } }
            guard same else { return false }
        }
        return true
    }()

    private static func makeDecimal(negative: Bool, exponent: Int, digits: [UInt8]) -> Decimal? {
        let text = (negative ? "-0." : "0.") + String(decoding: digits, as: UTF8.self) + "e" + String(exponent)
        return Decimal(string: text, locale: nil)
    }
}
