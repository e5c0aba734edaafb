import Histogram

/// One worker's figures (no sharing while the load runs; merged at the end).
struct Recorder: Sendable {
    /// Latency in microseconds, per operation.
    var latencies: [BenchOperation: Histogram<UInt64>] = [:]
    /// Successes per operation.
    var ok: [BenchOperation: Int] = [:]
    /// Failures per operation and status name.
    var errors: [BenchOperation: [String: Int]] = [:]
    /// The first message the server gave for each failure status.
    var messages: [String: String] = [:]
    /// Every operation's figures per second of the run (by when each
    /// request was answered, or failed), for `--timeseries`.
    var intervals: [Int: Interval] {
        var all = earlierIntervals
        if let current { all[currentSecond] = current }
        return all
    }
    /// The seconds before ``currentSecond``.
    private var earlierIntervals: [Int: Interval] = [:]
    /// The second the latest request finished in, and its figures: kept
    /// out of the dictionary while requests go on finishing in it (nearly
    /// every request), so that recording one is no dictionary lookup.
    private var currentSecond = 0
    private var current: Interval?

    /// One second's figures.
    struct Interval: Sendable {
        var ok = 0
        var errors = 0
        /// Two significant digits (1%) for a second's p50 and p99: a
        /// seventh of the memory of a whole run's histogram, made once per
        /// second and connection while the load runs.
        var latencies = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .two)
    }

    static func makeHistogram() -> Histogram<UInt64> {
        Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
    }

    /// Counts a request finished `second` seconds into the run; `micros`
    /// nil for one never sent (no latency to tell).
    mutating func record(_ operation: BenchOperation, micros: UInt64?, error: String?, second: Int, message: String? = nil) {
        if let error, let message, !message.isEmpty, messages[error] == nil { messages[error] = message }
        let clamped = micros.map { min(max($0, 1), 120_000_000) }
        if let clamped {
            _ = latencies[operation, default: Self.makeHistogram()].record(clamped)
        }
        if let error {
            errors[operation, default: [:]][error, default: 0] += 1
        } else {
            ok[operation, default: 0] += 1
        }
        let index = max(0, second)
        if index != currentSecond || current == nil {
            if let finished = current.take() { earlierIntervals[currentSecond] = finished }
            currentSecond = index
            current = earlierIntervals.removeValue(forKey: index) ?? Interval()
        }
        if error == nil { current?.ok += 1 } else { current?.errors += 1 }
        if let clamped { _ = current?.latencies.record(clamped) }
    }

    mutating func merge(_ other: Recorder) {
        for (operation, histogram) in other.latencies {
            latencies[operation, default: Self.makeHistogram()].add(histogram)
        }
        for (operation, count) in other.ok { ok[operation, default: 0] += count }
        for (operation, byCode) in other.errors {
            for (code, count) in byCode { errors[operation, default: [:]][code, default: 0] += count }
        }
        for (code, message) in other.messages where messages[code] == nil { messages[code] = message }
        if let finished = current.take() { earlierIntervals[currentSecond] = finished }
        for (second, interval) in other.intervals {
            earlierIntervals[second, default: Interval()].ok += interval.ok
            earlierIntervals[second, default: Interval()].errors += interval.errors
            earlierIntervals[second, default: Interval()].latencies.add(interval.latencies)
        }
    }

    /// Every operation's latencies together.
    var overall: Histogram<UInt64> {
        var all = Self.makeHistogram()
        for histogram in latencies.values { all.add(histogram) }
        return all
    }

    var requests: Int { ok.values.reduce(0, +) + errors.values.flatMap(\.values).reduce(0, +) }
}
