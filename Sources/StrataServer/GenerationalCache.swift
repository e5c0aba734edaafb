import NIOConcurrencyHelpers

/// A bounded cache in two generations: a lookup finds an entry of the
/// current generation, or moves one of the previous generation into it;
/// once the current generation holds ``capacity`` entries it becomes the
/// previous one and the older entries are dropped. Entries in use stay, the
/// rest age out, and at most twice ``capacity`` are held. Safe from any
/// thread (one lock, held for a dictionary operation on a key already
/// hashed: see ``Hashed``).
final class GenerationalCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Entries per generation.
    let capacity: Int

    /// A key with its hash, computed before the lock is taken. Hashing a
    /// large key (a fetch's predicate text, sort keys and variables) takes
    /// microseconds; done under the lock, it made every event loop that
    /// looked up a fetch wait for the others.
    private struct Hashed: Hashable, Sendable {
        let key: Key
        let hash: Int

        init(_ key: Key) {
            self.key = key
            hash = key.hashValue
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }

        static func == (lhs: Hashed, rhs: Hashed) -> Bool {
            lhs.hash == rhs.hash && lhs.key == rhs.key
        }
    }

    private struct Generations {
        var current: [Hashed: Value] = [:]
        var previous: [Hashed: Value] = [:]
    }

    private let generations = NIOLockedValueBox(Generations())

    /// A cache of at most twice `capacity` entries.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The value held for `key`, if any.
    func value(for key: Key) -> Value? {
        let key = Hashed(key)
        return generations.withLockedValue { generations in
            if let value = generations.current[key] { return value }
            guard let value = generations.previous.removeValue(forKey: key) else { return nil }
            insert(value, for: key, into: &generations)
            return value
        }
    }

    /// Holds `value` for `key`.
    func insert(_ value: Value, for key: Key) {
        let key = Hashed(key)
        generations.withLockedValue { insert(value, for: key, into: &$0) }
    }

    /// How many entries are held (both generations).
    var count: Int {
        generations.withLockedValue { $0.current.count + $0.previous.count }
    }

    private func insert(_ value: Value, for key: Hashed, into generations: inout Generations) {
        if generations.current.count >= capacity {
            generations.previous = generations.current
            generations.current = [:]
        }
        generations.current[key] = value
    }
}
