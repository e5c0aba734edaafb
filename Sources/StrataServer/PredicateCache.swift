import StrataQuery
import NIOConcurrencyHelpers

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

    /// A text compared and hashed by its UTF-8 bytes: `String`'s own
    /// equality is canonical equivalence ("é" precomposed equals "e" and a
    /// combining accent), while the parser, and SQLite after it, keep the
    /// exact characters, so two such texts are different predicates.
    private struct Key: Hashable {
        let text: String

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.text.utf8.elementsEqual(rhs.text.utf8)
        }

        func hash(into hasher: inout Hasher) {
            var text = text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    private struct Generations {
        var current: [Key: Predicate] = [:]
        var previous: [Key: Predicate] = [:]
    }

    private let generations = NIOLockedValueBox(Generations())

    /// A cache of at most twice `capacity` predicates.
    init(capacity: Int = 512) {
        self.capacity = max(1, capacity)
    }

    /// The predicate `text` parses to; nil for empty (or blank) text.
    /// Syntax errors are thrown and not cached.
    func predicate(_ text: String) throws -> Predicate? {
        guard text.utf8.count <= Self.maximumTextBytes else { return try ServerCore.predicate(text) }
        let key = Key(text: text)
        if let cached = generations.withLockedValue({ $0.current[key] }) { return cached }
        let promoted = generations.withLockedValue { generations -> Predicate? in
            guard let predicate = generations.previous.removeValue(forKey: key) else { return nil }
            insert(key, predicate, into: &generations)
            return predicate
        }
        if let promoted { return promoted }
        guard let parsed = try ServerCore.predicate(text) else { return nil }
        generations.withLockedValue { insert(key, parsed, into: &$0) }
        return parsed
    }

    /// How many predicates are held (both generations).
    var count: Int {
        generations.withLockedValue { $0.current.count + $0.previous.count }
    }

    private func insert(_ key: Key, _ predicate: Predicate, into generations: inout Generations) {
        if generations.current.count >= capacity {
            generations.previous = generations.current
            generations.current = [:]
        }
        generations.current[key] = predicate
    }
}
