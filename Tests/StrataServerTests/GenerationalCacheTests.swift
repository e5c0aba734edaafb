import Testing
@testable import StrataServer

/// The two-generation cache under the predicate and fetch-plan caches:
/// keys are hashed before its lock is taken, and entries age out.
@Suite struct GenerationalCacheTests {
    /// A key whose hash is the same for every value: only equality tells
    /// two apart.
    private struct Colliding: Hashable, Sendable {
        let value: Int
        func hash(into hasher: inout Hasher) { hasher.combine(0) }
    }

    @Test func keysWithTheSameHashAreKeptApart() {
        let cache = GenerationalCache<Colliding, String>(capacity: 16)
        for value in 0..<10 { cache.insert("v\(value)", for: Colliding(value: value)) }
        for value in 0..<10 { #expect(cache.value(for: Colliding(value: value)) == "v\(value)") }
        #expect(cache.value(for: Colliding(value: 10)) == nil)
        cache.insert("again", for: Colliding(value: 3))
        #expect(cache.value(for: Colliding(value: 3)) == "again")
        #expect(cache.count == 10)
    }

    @Test func anEntryInUseOutlivesItsGenerationAndOthersAgeOut() {
        let cache = GenerationalCache<String, Int>(capacity: 4)
        cache.insert(0, for: "kept")
        for value in 1...20 {
            cache.insert(value, for: "key \(value)")
            // Looked up each time: moved into the current generation.
            #expect(cache.value(for: "kept") == 0)
            #expect(cache.count <= 8)
        }
        #expect(cache.value(for: "key 1") == nil)
        #expect(cache.value(for: "key 20") == 20)
    }
}
