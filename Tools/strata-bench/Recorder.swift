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
    var intervals: [Int: Interval] = [:]

    /// One second's figures.
    struct Interval: Sendable {
        var ok = 0
        var errors = 0
        var latencies = Recorder.makeHistogram()
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
        if intervals[index] == nil { intervals[index] = Interval() }
        if error == nil { intervals[index]?.ok += 1 } else { intervals[index]?.errors += 1 }
        if let clamped { _ = intervals[index]?.latencies.record(clamped) }
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
        for (second, interval) in other.intervals {
            if intervals[second] == nil { intervals[second] = Interval() }
            intervals[second]?.ok += interval.ok
            intervals[second]?.errors += interval.errors
            intervals[second]?.latencies.add(interval.latencies)
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
