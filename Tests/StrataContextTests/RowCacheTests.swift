import Foundation
import StrataContext
import StrataModel
import StrataSamples
import StrataStore
import StrataSQLite
import Testing

/// The coordinator's row cache: shared reads by ID, never stale after a
/// save through the coordinator.
@Suite("Row cache", .timeLimit(.minutes(1)))
struct RowCacheTests {
    /// The Books sample on stores of `kind` with a row cache of `rowCache` snapshots.
    static func container(_ kind: StoreDescription.StoreType, in directory: TemporaryDirectory, rowCache: Int) async throws -> PersistentContainer {
        try await PersistentContainer(
            model: BooksSample.model,
            storeDescriptions: ContextFixture.descriptions(kind, model: BooksSample.model, in: directory.url), factory: .standard,
            transformers: BooksSample.transformers,
            transientRules: BooksSample.transientRules,
            rowCacheCapacity: rowCache
        )
    }

    @Test("Loads by ID come from the cache; saves and deletes invalidate it", arguments: ContextFixture.storeKinds)
    func coherentWithSaves(_ kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await Self.container(kind, in: directory, rowCache: 2)
        let cache = container.coordinator.rowCache
        let ids = try await container.newBackgroundContext().perform { context in
            var ids: [ObjectID] = []
            for title in ["one", "two", "three"] {
                let book = try context.insert("Book")
                try book.setValue(.uuid(UUID()), forKey: "uuid")
                try book.setValue(.string(title), forKey: "title")
                ids.append(book.objectID)
            }
            _ = try await context.save()
            return context.registeredObjects.map(\.objectID).filter { $0.entityName == "Book" }
        }
        #expect(ids.count == 3)
        let first = ids[0]
        func title(_ id: ObjectID) async throws -> PropertyValue {
            try await container.newBackgroundContext().perform { try await $0.existingObject(with: id)["title"] }
        }
        let original = try await title(first)
        let before = cache.statistics
        #expect(try await title(first) == original)
        #expect(cache.statistics.hits == before.hits + 1)

        // A save through another context invalidates before it returns.
        try await container.newBackgroundContext().perform { context in
            try await context.existingObject(with: first).setValue(.string("changed"), forKey: "title")
            _ = try await context.save()
        }
        #expect(try await title(first) == .string("changed"))
        let version = try await container.newBackgroundContext().perform { try await $0.existingObject(with: first).persistedVersion }
        #expect(version == 2)

        // Capacity 2: reading the others evicts the oldest; reads stay right.
        for id in ids { _ = try await title(id) }
        #expect(cache.statistics.count <= 2)

        // A delete drops the row: the object is gone, not served from memory.
        try await container.newBackgroundContext().perform { context in
            try await context.delete(try await context.existingObject(with: ids[2]))
            _ = try await context.save()
        }
        await #expect(throws: StrataError.self) { _ = try await title(ids[2]) }
        try await container.close()
    }

    @Test("Saves add no rows; a read by ID caches the row as the store holds it, and inserts evict nothing", arguments: ContextFixture.storeKinds)
    func readsFillTheCacheSavesDoNot(_ kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await Self.container(kind, in: directory, rowCache: 4)
        let cache = container.coordinator.rowCache
        func insert(_ count: Int) async throws -> [ObjectID] {
            try await container.newBackgroundContext().perform { context in
                var books: [ManagedObject] = []
                for i in 0..<count {
                    let book = try context.insert("Book")
                    try book.setValue(.uuid(UUID()), forKey: "uuid")
                    try book.setValue(.string("Crème \(i)"), forKey: "title")
                    try book.setValue(.decimal(Decimal(string: "12.50")!), forKey: "price")
                    try book.setValue(.date(Date(timeIntervalSinceReferenceDate: 123_456.789)), forKey: "publishDate")
                    books.append(book)
                }
                _ = try await context.save()
                return books.map(\.objectID)
            }
        }
        let read = try await insert(3)
        #expect(cache.statistics.count == 0, "a save added rows to the cache")
        let store = try #require(container.coordinator.store(identifier: read[0].storeIdentifier))
        let fromCoordinator = try await container.coordinator.snapshots(for: read, in: store)
        #expect(fromCoordinator.count == 3)
        let cached = try #require(cache.cachedSnapshots(read))
        // Exactly what the store answers.
        let stored = try await store.snapshots(for: read)
        for (fromCache, fromStore) in zip(cached, stored.sorted { read.firstIndex(of: $0.objectID)! < read.firstIndex(of: $1.objectID)! }) {
            #expect(fromCache.objectID == fromStore.objectID)
            #expect(fromCache.version == 1 && fromStore.version == 1)
            #expect(fromCache.values == fromStore.values)
            #expect(fromCache.values["canonicalTitle"] != nil, "the derived attribute is cached as stored")
        }
        // More inserts than the cache holds leave the rows read in place.
        let others = try await insert(8)
        #expect(cache.cachedSnapshots(read) != nil, "inserts evicted rows that were read")
        #expect(cache.cachedSnapshots([others[0]]) == nil)
        #expect(cache.statistics.count == 3)
        try await container.close()
    }

    @Test("An attachment lives exactly as long as its row: a newer read, a save, eviction and removeAll drop it")
    func attachmentsGoWithTheirRows() async throws {
        let directory = TemporaryDirectory()
        let container = try await Self.container(.inMemory, in: directory, rowCache: 2)
        let cache = container.coordinator.rowCache
        let ids = try await container.newBackgroundContext().perform { context in
            var books: [ManagedObject] = []
            for title in ["one", "two", "three"] {
                let book = try context.insert("Book")
                try book.setValue(.uuid(UUID()), forKey: "uuid")
                try book.setValue(.string(title), forKey: "title")
                books.append(book)
            }
            _ = try await context.save()
            return books.map(\.objectID)
        }
        func read(_ id: ObjectID) async throws {
            _ = try await container.newBackgroundContext().perform { try await $0.existingObject(with: id)["title"] }
        }
        #expect(cache.statistics.count == 0, "the save added rows to the cache")
        try await read(ids[0])
        let (rows, generation) = try #require(cache.cachedRows([ids[0]]))
        #expect(rows[0].attachment == nil)
        cache.attach([1, 2, 3], to: rows[0].snapshot, readAt: generation)
        #expect(cache.cachedRows([ids[0]])?.rows[0].attachment == [1, 2, 3])

        // A save that updates the row drops it, attachment and all; the row
        // read again has none, and an attachment made from the old read is
        // refused (the cache changed since).
        try await container.newBackgroundContext().perform { context in
            try await context.existingObject(with: ids[0]).setValue(.string("changed"), forKey: "title")
            _ = try await context.save()
        }
        #expect(cache.cachedRows([ids[0]]) == nil)
        try await read(ids[0])
        cache.attach([9], to: rows[0].snapshot, readAt: generation)
        let fresh = try #require(cache.cachedRows([ids[0]]))
        #expect(fresh.rows[0].attachment == nil)
        #expect(fresh.rows[0].snapshot.version == 2)
        // Another version's attachment is refused even at the current generation.
        cache.attach([9], to: rows[0].snapshot, readAt: fresh.generation)
        #expect(cache.cachedRows([ids[0]])?.rows[0].attachment == nil)
        cache.attach([4], to: fresh.rows[0].snapshot, readAt: fresh.generation)
        #expect(cache.cachedRows([ids[0]])?.rows[0].attachment == [4])

        // Capacity 2: reading two more rows evicts the first, attachment too.
        try await read(ids[1])
        try await read(ids[2])
        #expect(cache.cachedRows([ids[0]]) == nil)
        try await read(ids[0])
        #expect(cache.cachedRows([ids[0]])?.rows[0].attachment == nil)

        // removeAll (another process changed the store) drops everything.
        let now = try #require(cache.cachedRows([ids[0]]))
        cache.attach([5], to: now.rows[0].snapshot, readAt: now.generation)
        cache.removeAll()
        #expect(cache.cachedRows([ids[0]]) == nil)
        try await read(ids[0])
        #expect(cache.cachedRows([ids[0]])?.rows[0].attachment == nil)
        try await container.close()
    }
}
