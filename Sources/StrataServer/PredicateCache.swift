import StrataQuery

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
    /// The longest text kept (longer ones are rare and would make the
    /// cache's memory depend on what clients send).
    static let maximumTextBytes = 4096

    private let cache: GenerationalCache<ExactText, Predicate>

    /// A cache of at most twice `capacity` predicates.
    init(capacity: Int = 512) {
        cache = GenerationalCache(capacity: capacity)
    }

    /// Entries per generation.
    var capacity: Int { cache.capacity }

    /// The predicate `text` parses to; nil for empty (or blank) text.
    /// Syntax errors are thrown and not cached.
    func predicate(_ text: String) throws -> Predicate? {
        guard text.utf8.count <= Self.maximumTextBytes else { return try ServerCore.predicate(text) }
        let key = ExactText(text: text)
        if let cached = cache.value(for: key) { return cached }
        guard let parsed = try ServerCore.predicate(text) else { return nil }
        cache.insert(parsed, for: key)
        return parsed
    }

    /// How many predicates are held (both generations).
    var count: Int { cache.count }
}
