/// Parses `500ms`, `10s`, `2m`, `1h` or a bare number of seconds.
enum DurationParsing {
    static func parse(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count)), number >= 0, number.isFinite else { return nil }
            return .milliseconds(Int64((number * scale * 1000).rounded()))
        }
        guard let seconds = Double(text), seconds >= 0, seconds.isFinite else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
