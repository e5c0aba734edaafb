import Foundation

/// The running sum and count behind `@sum` and `@avg` of Decimal
/// attributes, shared by the evaluator and the `strata_decimal_sum` /
/// `strata_decimal_avg` SQL aggregates.
///
/// The sum is exact whatever the order of the terms, and cut once at the
/// end to what a Decimal holds: the digits past Foundation's 128-bit
/// significand are dropped (toward zero), as `Decimal(string:)` drops them
/// from the exact sum's text; beyond Decimal's range it is nil. Sums that
/// Foundation adds without loss (nearly all) stay in Decimal arithmetic;
/// the first that would lose a digit moves to ``ExactDecimalSum``.
///
/// The average is the exact sum divided by the count, truncated toward
/// zero at 10^-128 and cut the same way.
public struct DecimalAccumulator: Sendable {
    /// The sum while Foundation holds it exactly.
    private var fast: Decimal = .zero
    /// The sum once it needs more digits than a Decimal has.
    private var exact: ExactDecimalSum?
    /// Number of (non-nil) terms added.
    public private(set) var count = 0

    /// An empty accumulator.
    public init() {}

    /// Adds a term; NaN terms are ignored like nil ones.
    public mutating func add(_ value: Decimal) {
        guard !value.isNaN else { return }
        count += 1
        if exact == nil {
            var result = Decimal()
            var lhs = fast
            var rhs = value
            if NSDecimalAdd(&result, &lhs, &rhs, .plain) == .noError, !result.isNaN {
                fast = result
                return
            }
            exact = ExactDecimalSum(fast)
        }
        exact?.add(value)
    }

    /// `@sum`: the sum (0 when empty), or nil beyond Decimal's range.
    public var total: Decimal? {
        guard let exact else { return fast }
        return exact.decimal
    }

    /// `@avg`: sum / count, or nil when there were no terms (or beyond
    /// Decimal's range).
    public var average: Decimal? {
        guard count > 0 else { return nil }
        return (exact ?? ExactDecimalSum(fast)).quotient(dividingBy: count)
    }
}
