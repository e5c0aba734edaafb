/// Parses `1.5ms`, `200us` (or `µs`), `10s`, `2m`, `1h` or a bare number of
/// seconds, to the nanosecond (fractions are kept, not rounded to a unit).
enum DurationParsing {
    static func parse(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count)), number >= 0, number.isFinite else { return nil }
            return nanoseconds(number * scale)
        }
        guard let seconds = Double(text), seconds >= 0, seconds.isFinite else { return nil }
        return nanoseconds(seconds)
    }

    /// `seconds` as a Duration, to the nanosecond; nil past about 292 years.
    private static func nanoseconds(_ seconds: Double) -> Duration? {
        let nanoseconds = (seconds * 1e9).rounded()
        guard nanoseconds < 9.2e18 else { return nil }
        return .nanoseconds(Int64(nanoseconds))
    }
}
