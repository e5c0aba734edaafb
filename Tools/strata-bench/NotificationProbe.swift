import Foundation
import Histogram
import StrataClient
import StrataWire
import NIOConcurrencyHelpers

/// Measures how long an acknowledged insert takes to be announced by
/// another server on the same store (another process): a subscriber on
/// that server notes when each inserted ID arrives; the workload notes when
/// each insert was acknowledged; the latency is the difference (0 when the
/// notification came first).
final class NotificationProbe: Sendable {
    private struct State {
        var acknowledged: [String: ContinuousClock.Instant] = [:]
        var arrived: [String: ContinuousClock.Instant] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let client: StrataClient
    private let listener = NIOLockedValueBox<Task<Void, Never>?>(nil)

    /// A probe subscribing through `client` (connected to the other server).
    init(client: StrataClient) {
        self.client = client
    }

    /// Subscribes to `entity` inserts; returns once the subscription is answered.
    func start(entity: String) async throws {
        let notifications = try await client.subscribe(entity: entity)
        let task = Task { [self] in
            for await notification in notifications {
                let now = ContinuousClock.now
                self.state.withLockedValue { state in
                    for object in notification.inserted where state.arrived[object.id] == nil {
                        state.arrived[object.id] = now
                    }
                }
            }
        }
        listener.withLockedValue { $0 = task }
    }

    /// Notes that these inserted IDs were acknowledged now.
    func acknowledged(_ ids: [String]) {
        let now = ContinuousClock.now
        state.withLockedValue { state in
            for id in ids { state.acknowledged[id] = now }
        }
    }

    /// Waits up to `grace` for the last notifications, stops listening and
    /// answers the latencies (µs), how many inserts were announced and how
    /// many were not.
    func finish(grace: Duration = .seconds(2)) async -> (latencies: Histogram<UInt64>, matched: Int, missing: Int) {
        let deadline = ContinuousClock.now.advanced(by: grace)
        while ContinuousClock.now < deadline {
            let pending = state.withLockedValue { state in state.acknowledged.keys.contains { state.arrived[$0] == nil } }
            if !pending { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        listener.withLockedValue { $0?.cancel() }
        var histogram = Recorder.makeHistogram()
        var matched = 0
        var missing = 0
        state.withLockedValue { state in
            for (id, acknowledged) in state.acknowledged {
                guard let arrived = state.arrived[id] else {
                    missing += 1
                    continue
                }
                matched += 1
                let elapsed = acknowledged.duration(to: arrived)
                let micros = elapsed <= .zero ? 1 : UInt64(elapsed.components.seconds) * 1_000_000 + UInt64(elapsed.components.attoseconds / 1_000_000_000_000)
                _ = histogram.record(min(max(micros, 1), 120_000_000))
            }
        }
        return (histogram, matched, missing)
    }
}
