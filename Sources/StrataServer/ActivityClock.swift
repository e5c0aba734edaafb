import Synchronization

/// When a connection was last active: written by the reader on every frame
/// and when the last running request ends, read by the idle watchdog,
/// without locks or actor hops.
final class ActivityClock: Sendable {
    private let start = ContinuousClock.now
    /// Nanoseconds after `start` of the last activity.
    private let last = Atomic<Int64>(0)

    /// Notes activity now.
    func touch() {
        last.store(Self.nanoseconds(ContinuousClock.now - start), ordering: .relaxed)
    }

    /// How long since the last activity (or since the connection opened).
    var idleTime: Duration {
        (ContinuousClock.now - start) - .nanoseconds(last.load(ordering: .relaxed))
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
