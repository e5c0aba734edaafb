import Foundation

/// Conversions into the decimal comparison domain, shared by the evaluator
/// and the SQL functions so that both convert identically.
public enum DecimalConversion {
    /// The Decimal of a Double's shortest round-tripping decimal text
    /// (`0.1` becomes exactly `0.1`, not the binary value's 55 digits);
    /// `nil` for NaN, infinities and values outside Decimal's range.
    public static func decimal(from value: Double) -> Decimal? {
        guard value.isFinite else { return nil }
        if value == 0 { return Decimal.zero }
        // Swift's description is the shortest text that reads back as the
        // same Double: "0.1", "1e-05", "1.5e+20".
        return Decimal(string: value.description, locale: nil).flatMap { $0.isNaN ? nil : $0 }
    }

    /// The Decimal of an integer (always exact: Int64 has at most 19 digits).
    public static func decimal(from value: Int64) -> Decimal {
        Decimal(value)
    }
}
