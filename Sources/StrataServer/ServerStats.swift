import Foundation
import Histogram
import Metrics
import NIOConcurrencyHelpers
import StrataWire
import Synchronization

/// The server's own figures for the Stats operation (connections, requests
/// and errors per operation, latency percentiles), also reported to
/// swift-metrics as `strata_requests_total`, `strata_request_errors_total`
/// and the `strata_request_duration` timer, dimensioned by operation.
final class ServerStats: Sendable {
    /// One operation's figures, and its swift-metrics handles. Found by
    /// name once (``recorder(for:)``) and kept by the handlers that answer
    /// on the event loop, so that recording a request looks nothing up and
    /// takes only this operation's lock.
    final class OperationRecorder: Sendable {
        fileprivate struct Figures {
            var requests: UInt64 = 0
            var errors: UInt64 = 0
            var latencyMicros = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .two)
        }

        fileprivate let figures = NIOLockedValueBox(Figures())
        private let requests: Counter
        private let errors: Counter
        private let duration: Metrics.Timer

        fileprivate init(operation: String) {
            // Making the handles looks up the factory and allocates: once.
            requests = Counter(label: "strata_requests_total", dimensions: [("operation", operation)])
            errors = Counter(label: "strata_request_errors_total", dimensions: [("operation", operation)])
            duration = Metrics.Timer(label: "strata_request_duration", dimensions: [("operation", operation)])
        }

        /// Records one finished request.
        func record(duration elapsed: Duration, failed: Bool) {
            let parts = elapsed.components
            let micros = UInt64(max(0, parts.seconds)) * 1_000_000 + UInt64(max(0, parts.attoseconds / 1_000_000_000_000))
            figures.withLockedValue { figures in
                figures.requests += 1
                if failed { figures.errors += 1 }
                _ = figures.latencyMicros.record(min(micros, 60_000_000))
            }
            requests.increment()
            if failed { errors.increment() }
            duration.recordNanoseconds(Int64(micros) * 1000)
        }
    }

    private struct State {
        var operations: [String: OperationRecorder] = [:]
        var connectionsOpen = 0
        var connectionsTotal: UInt64 = 0
        var subscriptions = 0
    }

    private let state = NIOLockedValueBox(State())
    /// Requests being run on the async side now (gets the event loop
    /// answers from the row cache are done as they are read).
    private let inFlight = Atomic<Int>(0)
    let started = ContinuousClock.now

    /// The recorder of `operation`'s requests (made the first time).
    func recorder(for operation: String) -> OperationRecorder {
        state.withLockedValue { state in
            if let existing = state.operations[operation] { return existing }
            let made = OperationRecorder(operation: operation)
            state.operations[operation] = made
            return made
        }
    }

    /// Records one finished request.
    func record(operation: String, duration: Duration, failed: Bool) {
        recorder(for: operation).record(duration: duration, failed: failed)
    }

    /// A request began running (``requestFinished()`` follows).
    func requestStarted() { inFlight.add(1, ordering: .relaxed) }

    /// A request finished.
    func requestFinished() { inFlight.subtract(1, ordering: .relaxed) }

    /// Requests running now.
    var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }

    /// Counts a new connection unless `limit` are open already (one
    /// check-and-count, so simultaneous arrivals cannot pass the limit).
    func openConnection(limit: Int) -> Bool {
        let opened: Int? = state.withLockedValue { state in
            guard state.connectionsOpen < limit else { return nil }
            state.connectionsOpen += 1
            state.connectionsTotal += 1
            return state.connectionsOpen
        }
        guard let opened else { return false }
        Gauge(label: "strata_connections_open").record(opened)
        return true
    }

    /// A connection closed.
    func closeConnection() {
        let open = state.withLockedValue { state in
            state.connectionsOpen -= 1
            return state.connectionsOpen
        }
        Gauge(label: "strata_connections_open").record(open)
    }

    /// Connections open now.
    var connectionsOpen: Int { state.withLockedValue { $0.connectionsOpen } }

    /// A subscription was added (+1) or removed (-1).
    func subscriptions(changedBy delta: Int) {
        state.withLockedValue { $0.subscriptions += delta }
    }

    /// The figures as the Stats operation reports them.
    func snapshot() -> Strata_V1_StatsResponse {
        state.withLockedValue { state in
            Strata_V1_StatsResponse.with { response in
                let uptime = (ContinuousClock.now - started).components
                response.uptimeSeconds = Double(uptime.seconds) + Double(uptime.attoseconds) / 1e18
                response.connectionsOpen = UInt32(clamping: state.connectionsOpen)
                response.connectionsTotal = state.connectionsTotal
                response.subscriptions = UInt32(clamping: state.subscriptions)
                // Operations with no request yet (a connection's handlers
                // make their recorders when it opens) are not listed.
                let recorded = state.operations.map { ($0.key, $0.value.figures.withLockedValue { $0 }) }.filter { $0.1.requests > 0 }
                response.operations = recorded.sorted { $0.0 < $1.0 }.map { name, op in
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
