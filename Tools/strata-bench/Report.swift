import Foundation
import Histogram

/// The summary: for people (a table of latency percentiles) or as one JSON
/// object; the whole distribution goes to `--hgrm`.
struct Report {
    /// Notification latency measured with `--watch-port`.
    struct Notification {
        /// From each insert's acknowledgement to its notification on the other server, µs.
        var latencies: Histogram<UInt64>
        /// Inserts announced.
        var matched: Int
        /// Acknowledged inserts never announced (within the grace period).
        var missing: Int
    }

    let recorder: Recorder
    let duration: Duration
    let settings: [String: Any]
    var notification: Notification?

    init(recorder: Recorder, duration: Duration, settings: [String: Any]) {
        self.recorder = recorder
        self.duration = duration
        self.settings = settings
    }

    var seconds: Double { Self.seconds(duration) }

    /// A duration in seconds, fractions kept.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Latency figures in milliseconds.
    static func latency(_ histogram: Histogram<UInt64>) -> [String: Double] {
        guard histogram.totalCount > 0 else { return ["min": 0, "p50": 0, "p90": 0, "p99": 0, "p999": 0, "max": 0, "mean": 0] }
        func ms(_ micros: UInt64) -> Double { (Double(micros) / 1000 * 1000).rounded() / 1000 }
        return [
            "min": ms(histogram.min),
            "p50": ms(histogram.valueAtPercentile(50)),
            "p90": ms(histogram.valueAtPercentile(90)),
            "p99": ms(histogram.valueAtPercentile(99)),
            "p999": ms(histogram.valueAtPercentile(99.9)),
            "max": ms(histogram.max),
            "mean": (histogram.mean / 1000 * 1000).rounded() / 1000,
        ]
    }

    private func figures(ok: Int, errors: [String: Int], histogram: Histogram<UInt64>) -> [String: Any] {
        let requests = ok + errors.values.reduce(0, +)
        return [
            "requests": requests,
            "ok": ok,
            "errors": errors,
            "throughputRps": seconds > 0 ? (Double(requests) / seconds * 10).rounded() / 10 : 0,
            "latencyMs": Self.latency(histogram),
        ]
    }

    /// The JSON object `--json` prints.
    var json: [String: Any] {
        var errors: [String: Int] = [:]
        for byCode in recorder.errors.values {
            for (code, count) in byCode { errors[code, default: 0] += count }
        }
        var object = figures(ok: recorder.ok.values.reduce(0, +), errors: errors, histogram: recorder.overall)
        object["durationSeconds"] = (seconds * 1000).rounded() / 1000
        var operations: [String: Any] = [:]
        for operation in BenchOperation.allCases {
            guard let histogram = recorder.latencies[operation] else { continue }
            operations[operation.rawValue] = figures(ok: recorder.ok[operation] ?? 0, errors: recorder.errors[operation] ?? [:], histogram: histogram)
        }
        object["operations"] = operations
        object["settings"] = settings
        object["errorMessages"] = recorder.messages
        if let notification {
            object["notification"] = [
                "matched": notification.matched,
                "missing": notification.missing,
                "latencyMs": Self.latency(notification.latencies),
            ] as [String: Any]
        }
        return object
    }

    func jsonText() throws -> String {
        let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .prettyPrinted])
        return String(decoding: data, as: UTF8.self)
    }

    /// The summary for people.
    var text: String {
        var lines: [String] = []
        let total = recorder.requests
        let failed = recorder.errors.values.flatMap(\.values).reduce(0, +)
        lines.append(String(format: "requests %d   ok %d   errors %d   duration %.2f s   throughput %.1f req/s", total, total - failed, failed, seconds, seconds > 0 ? Double(total) / seconds : 0))
        var byCode: [String: Int] = [:]
        for codes in recorder.errors.values { for (code, count) in codes { byCode[code, default: 0] += count } }
        if !byCode.isEmpty {
            lines.append("errors by status: " + byCode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            for (code, message) in recorder.messages.sorted(by: { $0.key < $1.key }) {
                lines.append("  first \(code): \(message)")
            }
        }
        lines.append("")
        let header = ["operation", "requests", "errors", "req/s", "min", "p50", "p90", "p99", "p99.9", "max"]
        var rows: [[String]] = []
        func row(_ name: String, _ histogram: Histogram<UInt64>, requests: Int, errors: Int) -> [String] {
            let l = Self.latency(histogram)
            let rate = seconds > 0 ? Double(requests) / seconds : 0
            return [name, "\(requests)", "\(errors)", String(format: "%.1f", rate)] + ["min", "p50", "p90", "p99", "p999", "max"].map { String(format: "%.3f", l[$0] ?? 0) }
        }
        for operation in BenchOperation.allCases {
            guard let histogram = recorder.latencies[operation] else { continue }
            let errors = recorder.errors[operation]?.values.reduce(0, +) ?? 0
            rows.append(row(operation.rawValue, histogram, requests: (recorder.ok[operation] ?? 0) + errors, errors: errors))
        }
        rows.append(row("all", recorder.overall, requests: total, errors: failed))
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func format(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == 0 ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0) : String(repeating: " ", count: widths[index] - cell.count) + cell
            }.joined(separator: "  ")
        }
        lines.append("latency in ms")
        lines.append(format(header))
        for row in rows { lines.append(format(row)) }
        if let notification {
            let l = Self.latency(notification.latencies)
            lines.append("")
            lines.append(String(format: "notification latency (insert acknowledged → announced by the other server): %d announced, %d missing; ms p50 %.3f  p90 %.3f  p99 %.3f  max %.3f",
                                notification.matched, notification.missing, l["p50"] ?? 0, l["p90"] ?? 0, l["p99"] ?? 0, l["max"] ?? 0))
        }
        return lines.joined(separator: "\n")
    }

    /// The per-operation figures as CSV (`--csv`): a header, one line per
    /// operation, then `all`; latencies in milliseconds.
    var csv: String {
        var lines = ["operation,requests,ok,errors,throughput_rps,min_ms,p50_ms,p90_ms,p99_ms,p999_ms,max_ms,mean_ms"]
        func line(_ name: String, ok: Int, errors: Int, _ histogram: Histogram<UInt64>) -> String {
            let l = Self.latency(histogram)
            let requests = ok + errors
            let rate = seconds > 0 ? Double(requests) / seconds : 0
            return "\(name),\(requests),\(ok),\(errors)," + String(format: "%.1f", rate) + "," + ["min", "p50", "p90", "p99", "p999", "max", "mean"].map { String(format: "%.3f", l[$0] ?? 0) }.joined(separator: ",")
        }
        for operation in BenchOperation.allCases {
            guard let histogram = recorder.latencies[operation] else { continue }
            lines.append(line(operation.rawValue, ok: recorder.ok[operation] ?? 0, errors: recorder.errors[operation]?.values.reduce(0, +) ?? 0, histogram))
        }
        let failed = recorder.errors.values.flatMap(\.values).reduce(0, +)
        lines.append(line("all", ok: recorder.requests - failed, errors: failed, recorder.overall))
        return lines.joined(separator: "\n")
    }

    /// One CSV line per second of the run (`--timeseries`): the second
    /// (from the start), requests finished in it, errors, throughput, and
    /// the p50 and p99 latency of its requests in milliseconds (to two
    /// significant digits). Seconds in which nothing finished are lines of
    /// zeros.
    var timeSeriesCSV: String {
        var lines = ["second,requests,errors,throughput_rps,p50_ms,p99_ms"]
        let intervals = recorder.intervals
        let last = intervals.keys.max() ?? -1
        for second in stride(from: 0, through: last, by: 1) {
            let interval = intervals[second] ?? Recorder.Interval()
            let requests = interval.ok + interval.errors
            let count = interval.latencies.totalCount
            let p50 = count > 0 ? Double(interval.latencies.valueAtPercentile(50)) / 1000 : 0
            let p99 = count > 0 ? Double(interval.latencies.valueAtPercentile(99)) / 1000 : 0
            // The run's last second may be cut short: its rate is over its length.
            let length = second == last ? min(1, max(0.001, seconds - Double(second))) : 1
            lines.append("\(second),\(requests),\(interval.errors)," + String(format: "%.1f,%.3f,%.3f", Double(requests) / length, p50, p99))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The latencies of every request as HdrHistogram's percentile
    /// distribution (`.hgrm`), in milliseconds: the format HdrHistogram's
    /// plotter and wrk2 use.
    var percentileDistribution: String {
        var text = ""
        recorder.overall.outputPercentileDistribution(to: &text, outputValueUnitScalingRatio: 1000)
        return text
    }
}
