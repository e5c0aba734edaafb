#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// When a connection was last active: written by the reader on every frame
/// and when the last running request ends, read by the idle watchdog,
/// without locks or actor hops.
///
/// On Linux it reads the coarse monotonic clock (`CLOCK_MONOTONIC_COARSE`,
/// the kernel's last tick: a few milliseconds' resolution, read without
/// the timestamp counter), which is all an idle timeout of seconds needs;
/// every answer made on an event loop touches it. Unlike
/// `ContinuousClock`, it does not count time the host spends suspended: a
/// connection idle across a suspension is closed up to one timeout later.
final class ActivityClock: Sendable {
    private let start: Int64
    /// Nanoseconds after `start` of the last activity.
    private let last = Atomic<Int64>(0)

    init() {
        start = Self.now()
    }

    /// Notes activity now.
    func touch() {
        last.store(Self.now() - start, ordering: .relaxed)
    }

    /// How long since the last activity (or since the connection opened).
    var idleTime: Duration {
        .nanoseconds(max(0, Self.now() - start - last.load(ordering: .relaxed)))
    }

    /// Nanoseconds on a monotonic clock.
    private static func now() -> Int64 {
        #if canImport(Glibc) || canImport(Musl)
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        #else
        let components = (ContinuousClock.now - reference).components
        return components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
        #endif
    }

    #if !canImport(Glibc) && !canImport(Musl)
    /// Where the fallback's nanoseconds are counted from.
    private static let reference = ContinuousClock.now
    #endif
}
