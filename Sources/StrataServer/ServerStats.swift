import Foundation
import Histogram
import Metrics
import StrataWire
import Synchronization

/// The server's own figures for the Stats operation (connections, requests
/// and errors per operation, latency percentiles), also reported to
/// swift-metrics as `strata_requests_total`, `strata_request_errors_total`
/// and the `strata_request_duration` timer, dimensioned by operation.
final class ServerStats: Sendable {
    private struct Operation {
        var requests: UInt64 = 0
        var errors: UInt64 = 0
        var latencyMicros = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .two)
    }

    private struct State {
        var operations: [String: Operation] = [:]
        var connectionsOpen = 0
        var connectionsTotal: UInt64 = 0
        var subscriptions = 0
    }

    private let state = Mutex(State())
    let started = ContinuousClock.now

    /// Records one finished request.
    func record(operation: String, duration: Duration, failed: Bool) {
        let micros = UInt64(max(0, duration.components.seconds)) * 1_000_000 + UInt64(max(0, duration.components.attoseconds / 1_000_000_000_000))
        state.withLock { state in
            var op = state.operations[operation] ?? Operation()
            op.requests += 1
            if failed { op.errors += 1 }
            _ = op.latencyMicros.record(min(micros, 60_000_000))
            state.operations[operation] = op
        }
        Counter(label: "strata_requests_total", dimensions: [("operation", operation)]).increment()
        if failed {
            Counter(label: "strata_request_errors_total", dimensions: [("operation", operation)]).increment()
        }
        Metrics.Timer(label: "strata_request_duration", dimensions: [("operation", operation)]).recordNanoseconds(Int64(micros) * 1000)
    }

    /// A connection opened (`true`) or closed.
    func connection(opened: Bool) {
        state.withLock { state in
            if opened {
                state.connectionsOpen += 1
                state.connectionsTotal += 1
            } else {
                state.connectionsOpen -= 1
            }
        }
        Gauge(label: "strata_connections_open").record(connectionsOpen)
    }

    /// Connections open now.
    var connectionsOpen: Int { state.withLock { $0.connectionsOpen } }

    /// A subscription was added (+1) or removed (-1).
    func subscriptions(changedBy delta: Int) {
        state.withLock { $0.subscriptions += delta }
    }

    /// The figures as the Stats operation reports them.
    func snapshot() -> Strata_V1_StatsResponse {
        state.withLock { state in
            Strata_V1_StatsResponse.with { response in
                let uptime = (ContinuousClock.now - started).components
                response.uptimeSeconds = Double(uptime.seconds) + Double(uptime.attoseconds) / 1e18
                response.connectionsOpen = UInt32(clamping: state.connectionsOpen)
                response.connectionsTotal = state.connectionsTotal
                response.subscriptions = UInt32(clamping: state.subscriptions)
                response.operations = state.operations.sorted { $0.key < $1.key }.map { name, op in
                    Strata_V1_OperationStats.with {
                        $0.operation = name
                        $0.requests = op.requests
                        $0.errors = op.errors
                        $0.latencyP50Ms = Double(op.latencyMicros.valueAtPercentile(50)) / 1000
                        $0.latencyP90Ms = Double(op.latencyMicros.valueAtPercentile(90)) / 1000
                        $0.latencyP99Ms = Double(op.latencyMicros.valueAtPercentile(99)) / 1000
                        $0.latencyMaxMs = Double(op.latencyMicros.max) / 1000
                    }
                }
            }
        }
    }
}
