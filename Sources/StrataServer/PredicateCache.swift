import StrataQuery
import Synchronization

/// Parsed predicates by their text, so that a query sent again and again
/// (with its values in variables, as clients should send them) is parsed
/// once. Bounded: two generations of at most ``capacity`` entries each;
/// when the current one fills, it becomes the previous one and the oldest
/// is dropped, so the texts in use stay and the rest age out. Texts longer
/// than ``maximumTextBytes`` are parsed every time and never kept.
///
/// Only syntax is cached: resolving a predicate against the model, binding
/// its variables and applying access rules happen per request.
final class PredicateCache: Sendable {
    /// Entries per generation.
    let capacity: Int
    /// The longest text kept (longer ones are rare and would make the
    /// cache's memory depend on what clients send).
    static let maximumTextBytes = 4096

    private struct Generations {
        var current: [String: Predicate] = [:]
        var previous: [String: Predicate] = [:]
    }

    private let generations = Mutex(Generations())

    /// A cache of at most twice `capacity` predicates.
    init(capacity: Int = 512) {
        self.capacity = max(1, capacity)
    }

    /// The predicate `text` parses to; nil for empty (or blank) text.
    /// Syntax errors are thrown and not cached.
    func predicate(_ text: String) throws -> Predicate? {
        guard text.utf8.count <= Self.maximumTextBytes else { return try ServerCore.predicate(text) }
        if let cached = generations.withLock({ $0.current[text] }) { return cached }
        let promoted = generations.withLock { generations -> Predicate? in
            guard let predicate = generations.previous.removeValue(forKey: text) else { return nil }
            insert(text, predicate, into: &generations)
            return predicate
        }
        if let promoted { return promoted }
        guard let parsed = try ServerCore.predicate(text) else { return nil }
        generations.withLock { insert(text, parsed, into: &$0) }
        return parsed
    }

    /// How many predicates are held (both generations).
    var count: Int {
        generations.withLock { $0.current.count + $0.previous.count }
    }

    private func insert(_ text: String, _ predicate: Predicate, into generations: inout Generations) {
        if generations.current.count >= capacity {
            generations.previous = generations.current
            generations.current = [:]
        }
        generations.current[text] = predicate
    }
}
