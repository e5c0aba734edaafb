import NIOConcurrencyHelpers

/// A small thread-safe cache of compiled patterns keyed by their text
/// (`LIKE` patterns, regular expressions). When full it is simply emptied:
/// patterns are constants of a handful of queries, so churn is rare and a
/// recompilation is cheap compared with a lock-free design's complexity.
final class PatternCache<Value: Sendable>: Sendable {
    private let storage: NIOLockedValueBox<[String: Value]>
    private let capacity: Int

    /// A cache holding at most `capacity` entries.
    init(capacity: Int) {
        self.capacity = capacity
        self.storage = NIOLockedValueBox([:])
    }

    /// The cached value for `key`, compiling it with `make` (outside the
    /// lock) when absent.
    func value(for key: String, make: (String) -> Value) -> Value {
        if let hit = storage.withLockedValue({ $0[key] }) { return hit }
        let made = make(key)
        storage.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = made
        }
        return made
    }
}
