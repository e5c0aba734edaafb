/// A correctly rounded sum of Doubles: the exact sum of the finite terms,
/// rounded once (to nearest, ties to even), so it does not depend on the
/// order of the terms, even where a running total would pass the largest
/// Double.
///
/// `@sum` and `@avg` of floating-point attributes use it in memory and, as
/// the `strata_fsum` aggregate, in SQL, where rows come in whatever order
/// the query plan picks: a naive running sum could then differ in the last
/// bit from the in-memory one. The PostgreSQL store sums each value's exact
/// `numeric` value and rounds once, which is the same number.
///
/// Every finite Double is a whole number of 2^-1074 below 2^2098, so the sum
/// is kept exactly as such a number in two's complement (35 64-bit words:
/// room for 2^60 terms); NaNs and infinities are added apart, in plain
/// arithmetic (`inf + -inf` is NaN), and added to the rounded finite sum.
public struct ExactDoubleSum: Sendable {
    /// Words of the fixed-point sum, least significant first.
    private static let width = 35
    private var words: [UInt64] = []
    private var special: Double = 0

    /// Number of terms added.
    public private(set) var count = 0

    /// An empty sum (0).
    public init() {}

    /// Adds a term.
    public mutating func add(_ value: Double) {
        count += 1
        guard value.isFinite else {
            special += value
            return
        }
        guard value != 0 else { return }
        if words.isEmpty { words = Array(repeating: 0, count: Self.width) }
        let bits = value.bitPattern
        let biased = Int((bits >> 52) & 0x7FF)
        var significand = bits & ((1 << 52) - 1)
        // value = significand × 2^(position - 1074)
        var position = 0
        if biased > 0 {
            significand |= 1 << 52
            position = biased - 1
        }
        let index = position / 64
        let offset = UInt64(position % 64)
        let low = significand << offset
        let high = offset == 0 ? 0 : significand >> (64 - offset)
        apply(low, at: index, subtracting: value < 0)
        apply(high, at: index + 1, subtracting: value < 0)
    }

    /// The correctly rounded sum (0 when empty).
    public var value: Double {
        special + finiteValue
    }

    /// `amount` added into (or subtracted from) the word at `index`, the
    /// carry (or borrow) on up.
    private mutating func apply(_ amount: UInt64, at index: Int, subtracting: Bool) {
        var carry = amount
        var i = index
        while carry != 0, i < Self.width {
            let (result, overflow) = subtracting ? words[i].subtractingReportingOverflow(carry) : words[i].addingReportingOverflow(carry)
            words[i] = result
            carry = overflow ? 1 : 0
            i += 1
        }
    }

    /// The finite terms' exact sum, rounded to nearest (ties to even); an
    /// infinity past the largest Double.
    private var finiteValue: Double {
        guard let top = words.last else { return 0 }
        let negative = top >> 63 == 1
        var magnitude = words
        if negative {
            // Two's complement: invert and add one.
            var carry: UInt64 = 1
            for i in magnitude.indices {
                let (sum, overflow) = (~magnitude[i]).addingReportingOverflow(carry)
                magnitude[i] = sum
                carry = overflow ? 1 : 0
            }
        }
        guard let word = magnitude.lastIndex(where: { $0 != 0 }) else { return 0 }
        let highest = word * 64 + (63 - magnitude[word].leadingZeroBitCount)
        func bit(_ i: Int) -> UInt64 { i < 0 ? 0 : (magnitude[i / 64] >> UInt64(i % 64)) & 1 }
        let sign: FloatingPointSign = negative ? .minus : .plus
        if highest < 53 {
            // Below 2^53 units: exact (a subnormal or a small normal).
            return Double(sign: sign, exponent: -1074, significand: Double(magnitude[0]))
        }
        // The 53 bits from the highest, then round half to even on the next
        // bit and whether anything below it is set.
        let lowest = highest - 52
        var significand: UInt64 = 0
        for i in stride(from: highest, through: lowest, by: -1) { significand = significand << 1 | bit(i) }
        let round = bit(lowest - 1) == 1
        var sticky = false
        if lowest - 1 > 0 {
            let below = lowest - 1
            for w in 0..<(below / 64) where magnitude[w] != 0 { sticky = true }
            if !sticky, below % 64 > 0, magnitude[below / 64] & ((1 << UInt64(below % 64)) - 1) != 0 { sticky = true }
        }
        var exponent = lowest - 1074
        if round, sticky || significand & 1 == 1 {
            significand += 1
            if significand == 1 << 53 {
                significand >>= 1
                exponent += 1
            }
        }
        // Past the largest Double this is an infinity.
        return Double(sign: sign, exponent: exponent, significand: Double(significand))
    }
}
