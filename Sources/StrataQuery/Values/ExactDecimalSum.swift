import Foundation

/// An exact sum of Decimals, for the rare sums Foundation's 128-bit
/// significand cannot hold: a signed whole number of 10^-128 (the smallest
/// unit any Decimal has), kept in base-10^9 limbs.
///
/// Its results are read back with `Decimal(string:)` from plain decimal
/// text, so that the digits a Decimal cannot hold are dropped exactly as
/// Foundation drops them (toward zero: the leading digits whose number
/// fits in 128 bits are kept), and a result beyond Decimal's exponents is
/// nil. The PostgreSQL store cuts its `numeric` sums the same way.
struct ExactDecimalSum: Sendable {
    /// Decimal places of the unit.
    static let scale = 128
    private static let base: UInt64 = 1_000_000_000

    private var negative = false
    /// Magnitude, least significant limb first; empty for zero.
    private var limbs: [UInt32] = []

    /// Zero.
    init() {}

    /// The exact value of `value` (a number, not NaN).
    init(_ value: Decimal) {
        add(value)
    }

    /// Adds `value` (not NaN) exactly.
    mutating func add(_ value: Decimal) {
        guard let (isNegative, magnitude) = Self.parse(value.description) else {
            // Foundation writes every Decimal as plain digits.
            assertionFailure("a Decimal written as '\(value.description)'")
            return
        }
        if magnitude.isEmpty { return }
        if limbs.isEmpty {
            (negative, limbs) = (isNegative, magnitude)
        } else if isNegative == negative {
            limbs = Self.add(limbs, magnitude)
        } else if Self.compare(limbs, magnitude) >= 0 {
            limbs = Self.subtract(limbs, magnitude)
        } else {
            (negative, limbs) = (isNegative, Self.subtract(magnitude, limbs))
        }
        if limbs.isEmpty { negative = false }
    }

    /// The sum as a Decimal, its digits past Foundation's significand
    /// dropped; nil beyond Decimal's range.
    var decimal: Decimal? {
        Self.decimal(negative: negative, limbs)
    }

    /// The sum divided by `count` (at least 1), truncated toward zero at
    /// 10^-128, then as ``decimal``.
    func quotient(dividingBy count: Int) -> Decimal? {
        let divisor = UInt64(max(1, count))
        var quotient = [UInt32](repeating: 0, count: limbs.count)
        var remainder: UInt64 = 0
        for index in limbs.indices.reversed() {
            // remainder < divisor, so remainder * 10^9 + limb fits in 128 bits
            // and the quotient digit is below 10^9.
            let product = remainder.multipliedFullWidth(by: Self.base)
            let (low, carry) = product.low.addingReportingOverflow(UInt64(limbs[index]))
            let (digit, rest) = divisor.dividingFullWidth((product.high + (carry ? 1 : 0), low))
            quotient[index] = UInt32(digit)
            remainder = rest
        }
        while quotient.last == 0 { quotient.removeLast() }
        return Self.decimal(negative: negative && !quotient.isEmpty, quotient)
    }

    // MARK: - Text

    /// Sign and magnitude (in units of 10^-128) of a Decimal's plain text
    /// (`-12.5`, `0.001`): Foundation writes Decimals without exponents.
    private static func parse(_ text: String) -> (Bool, [UInt32])? {
        var utf8 = Substring(text).utf8[...]
        let isNegative = utf8.first == UInt8(ascii: "-")
        if isNegative { utf8 = utf8.dropFirst() }
        var digits: [UInt8] = []
        digits.reserveCapacity(utf8.count + scale)
        var fraction = -1
        for byte in utf8 {
            if byte == UInt8(ascii: ".") {
                guard fraction < 0 else { return nil }
                fraction = 0
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                digits.append(byte - UInt8(ascii: "0"))
                if fraction >= 0 { fraction += 1 }
            } else {
                return nil
            }
        }
        let places = max(0, fraction)
        guard places <= scale else { return nil }
        digits += repeatElement(0, count: scale - places)
        // Base 10^9, from the least significant end.
        var limbs: [UInt32] = []
        limbs.reserveCapacity(digits.count / 9 + 1)
        var end = digits.count
        while end > 0 {
            let start = max(0, end - 9)
            var limb: UInt32 = 0
            for digit in digits[start..<end] { limb = limb * 10 + UInt32(digit) }
            limbs.append(limb)
            end = start
        }
        while limbs.last == 0 { limbs.removeLast() }
        return (isNegative, limbs)
    }

    /// `Decimal(string:)` of the plain text of a magnitude in units of
    /// 10^-128.
    private static func decimal(negative: Bool, _ limbs: [UInt32]) -> Decimal? {
        guard let top = limbs.last else { return .zero }
        var digits = String(top)
        for limb in limbs.dropLast().reversed() {
            let text = String(limb)
            digits += String(repeating: "0", count: 9 - text.utf8.count) + text
        }
        if digits.utf8.count <= scale {
            digits = String(repeating: "0", count: scale + 1 - digits.utf8.count) + digits
        }
        let point = digits.index(digits.endIndex, offsetBy: -scale)
        var fraction = digits[point...]
        while fraction.last == "0" { fraction = fraction.dropLast() }
        let text = (negative ? "-" : "") + digits[..<point] + (fraction.isEmpty ? "" : "." + fraction)
        guard let value = Decimal(string: text, locale: nil), !value.isNaN else { return nil }
        return value
    }

    // MARK: - Magnitudes

    private static func compare(_ a: [UInt32], _ b: [UInt32]) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for index in a.indices.reversed() where a[index] != b[index] {
            return a[index] < b[index] ? -1 : 1
        }
        return 0
    }

    private static func add(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(max(a.count, b.count) + 1)
        var carry: UInt64 = 0
        for index in 0..<max(a.count, b.count) {
            let sum = UInt64(index < a.count ? a[index] : 0) + UInt64(index < b.count ? b[index] : 0) + carry
            result.append(UInt32(sum % base))
            carry = sum / base
        }
        if carry > 0 { result.append(UInt32(carry)) }
        return result
    }

    /// `a - b`, with `a >= b`.
    private static func subtract(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(a.count)
        var borrow: Int64 = 0
        for index in a.indices {
            var difference = Int64(a[index]) - Int64(index < b.count ? b[index] : 0) - borrow
            borrow = 0
            if difference < 0 {
                difference += Int64(base)
                borrow = 1
            }
            result.append(UInt32(difference))
        }
        while result.last == 0 { result.removeLast() }
        return result
    }
}
