import Synchronization

/// The history tokens one store instance wrote in an unbroken run, with
/// no other writer's transaction between them, so that its change watcher
/// need not read its own commits back to learn they are its own.
///
/// The writer notes each commit group's tokens once committed
/// (``noteCommitted(_:)``): they follow the token that was the store's
/// newest when its write transaction began, and no other connection can
/// commit while that transaction holds the write lock. A group whose
/// first token follows the run's last extends the run; any other starts a
/// new one (another process committed in between). The watcher skips
/// reading tokens after `token` through `through` when they all lie in the
/// run (``wroteAll(after:through:)``); a run noted before or after the
/// watcher's snapshot, or one that does not reach the snapshot's newest
/// token, makes it read them, as it always did.
final class SQLiteOwnHistory: Sendable {
    private let run = Mutex<ClosedRange<Int64>?>(nil)

    /// Notes that this instance committed the transactions of `tokens`
    /// in one write transaction that began when the store's newest token
    /// was `tokens.lowerBound - 1`.
    func noteCommitted(_ tokens: ClosedRange<Int64>) {
        run.withLock { run in
            if let current = run, current.upperBound == tokens.lowerBound - 1 {
                run = current.lowerBound...tokens.upperBound
            } else {
                run = tokens
            }
        }
    }

    /// Whether a run is noted that starts no later than just after
    /// `token`: only then can ``wroteAll(after:through:)`` be true, and is
    /// the newest token worth reading.
    func mayCover(after token: Int64) -> Bool {
        // `lowerBound - 1`, not `token + 1`: a run's first token follows
        // another, while the last token seen may be the largest there is.
        run.withLock { run in run.map { $0.lowerBound - 1 <= token } ?? false }
    }

    /// Whether a watcher that saw everything through `token` may pass the
    /// commits through `through` over without reading them: they are all
    /// this instance's, and history was not purged past `token` (reading
    /// reports that, 134301).
    func passesOver(after token: Int64, through: Int64, purgedThrough: Int64) -> Bool {
        purgedThrough <= token && wroteAll(after: token, through: through)
    }

    /// Whether every transaction after `token` through `through` is one
    /// this instance wrote (and there is at least one).
    func wroteAll(after token: Int64, through: Int64) -> Bool {
        run.withLock { run in
            guard let run, through > token else { return false }
            return run.upperBound == through && run.lowerBound <= token + 1
        }
    }
}
