import Foundation

/// The running sum and count behind `@sum` and `@avg` of Decimal
/// attributes, shared by the evaluator and the `strata_decimal_sum` /
/// `strata_decimal_avg` SQL aggregates.
///
/// Decimal addition is exact while results fit in 38 significant digits;
/// beyond that Foundation rounds, and a result out of range is NaN, which
/// both paths treat as nil.
public struct DecimalAccumulator: Sendable {
    /// The sum so far (0 when empty).
    public private(set) var sum: Decimal = .zero
    /// Number of (non-nil) terms added.
    public private(set) var count = 0

    /// An empty accumulator.
    public init() {}

    /// Adds a term; NaN terms are ignored like nil ones.
    public mutating func add(_ value: Decimal) {
        guard !value.isNaN else { return }
        sum += value
        count += 1
    }

    /// `@sum`: the sum, or nil if it overflowed.
    public var total: Decimal? { sum.isNaN ? nil : sum }

    /// `@avg`: sum / count, or nil when there were no terms (or on overflow).
    public var average: Decimal? {
        guard count > 0, !sum.isNaN else { return nil }
        let result = sum / Decimal(count)
        return result.isNaN ? nil : result
    }
}
