import Foundation
import StrataContext
import StrataModel
import StrataQuery
import StrataStore
import Testing

/// `Coordinator.insertDirectly` against what a fresh context saves for the
/// same objects: the same rows, row cache entries, change sets and history;
/// nil (nothing written) whenever a context is needed.
@Suite struct DirectInsertTests {
    /// Paintings (defaults, bounds, a pattern, a derived attribute, a
    /// transient with a default, an optional to-one), artists, and entities
    /// that do not qualify: a mandatory relationship, a derivation through
    /// a relationship, an abstract parent, a uniqueness constraint.
    static let model = ObjectModel(name: "Gallery", entities: [
        EntityDescription(name: "Painting", attributes: [
            AttributeDescription(name: "title", type: .string),
            AttributeDescription(name: "year", type: .integer16, isOptional: true, minValue: .integer(1000), maxValue: .integer(2100)),
            AttributeDescription(name: "price", type: .decimal, isOptional: true, defaultValue: .decimal(10)),
            AttributeDescription(name: "rating", type: .double, isOptional: true, defaultValue: .double(2.5)),
            AttributeDescription(name: "code", type: .string, isOptional: true, regularExpression: "[A-Z]{3}"),
            AttributeDescription(name: "canonicalTitle", type: .string, isOptional: true, isDerived: true, derivationExpression: "canonical:(title)"),
            AttributeDescription(name: "scratch", type: .string, isOptional: true, isTransient: true, defaultValue: .string("x")),
        ], relationships: [
            RelationshipDescription(name: "artist", destination: "Artist", inverse: "paintings"),
        ], uniquenessConstraints: [["code"]]),
        EntityDescription(name: "Artist", attributes: [
            AttributeDescription(name: "name", type: .string),
        ], relationships: [
            RelationshipDescription(name: "paintings", destination: "Painting", inverse: "artist", toMany: true),
            RelationshipDescription(name: "frames", destination: "Frame", inverse: "artist", toMany: true),
        ]),
        EntityDescription(name: "Frame", attributes: [
            AttributeDescription(name: "wood", type: .string, isOptional: true),
            AttributeDescription(name: "artistName", type: .string, isOptional: true, isDerived: true, derivationExpression: "artist.name"),
        ], relationships: [
            RelationshipDescription(name: "artist", destination: "Artist", inverse: "frames"),
        ]),
        EntityDescription(name: "Sketch", attributes: [
            AttributeDescription(name: "subject", type: .string, isOptional: true),
        ], relationships: [
            RelationshipDescription(name: "study", destination: "Study", inverse: "sketches", optional: false),
        ]),
        EntityDescription(name: "Study", attributes: [
            AttributeDescription(name: "subject", type: .string, isOptional: true),
        ], relationships: [
            RelationshipDescription(name: "sketches", destination: "Sketch", inverse: "study", toMany: true),
        ]),
        EntityDescription(name: "Work", isAbstract: true, attributes: [
            AttributeDescription(name: "label", type: .string, isOptional: true),
        ]),
        EntityDescription(name: "Print", parent: "Work", attributes: [
            AttributeDescription(name: "copies", type: .integer32, isOptional: true),
        ]),
    ])

    private func container(_ kind: StoreDescription.StoreType, in directory: TemporaryDirectory) async throws -> PersistentContainer {
        try await PersistentContainer(model: Self.model, storeDescriptions: ContextFixture.descriptions(kind, model: Self.model, in: directory.url), rowCacheCapacity: 1000)
    }

    private func count(_ container: PersistentContainer, _ entity: String) async throws -> Int {
        try await container.newBackgroundContext().perform { context in try await context.count(ContextFixture.request(entity)) }
    }

    /// Values that pass, a context's way and the direct way.
    static let samples: [[String: PropertyValue]] = [
        ["title": .string("Crème Brûlée at Night")],
        ["title": .string("Water Lilies"), "year": .integer(1906), "price": .integer(42), "rating": .integer(4), "code": .string("WLL")],
        ["title": .string("Untitled"), "price": .null, "rating": .double(1.25), "year": .null],
    ]

    @Test("What a context would save: rows, cache, change set", arguments: ContextFixture.storeKinds)
    func savesWhatAContextSaves(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await container(kind, in: directory)
        let hub = container.coordinator.changes.subscribe()
        var published = hub.makeAsyncIterator()
        for (index, values) in Self.samples.enumerated() {
            // Through a context.
            let context = container.newBackgroundContext(name: "ctx", mergePolicy: .error)
            let viaContext: ObjectID = try await context.perform { context in
                let object = try context.insert("Painting")
                for (key, value) in values { try object.setValue(value, forKey: key) }
                try await context.save()
                return object.objectID
            }
            _ = await published.next()
            // Directly (the code, unique, only once).
            var direct = values
            if direct["code"] != nil { direct["code"] = .string("QQ\(Character(UnicodeScalar(UInt8(65 + index))))") }
            let result = try #require(try await container.coordinator.insertDirectly([DirectInsert(entity: "Painting", values: direct)], author: "me", contextName: "direct"))
            let id = try #require(result.insertedIDs.first)
            #expect(!id.isTemporary)
            #expect(result.changes.inserted == [id])
            #expect(result.changes.contextName == "direct")
            let heard = await published.next()
            #expect(heard?.inserted == [id])
            #expect(heard?.version(of: id) == 1)

            // The same stored values (the code apart), read from the store
            // itself (not through the row cache, which both paths filled),
            // and the same in the row cache.
            let store = container.coordinator.stores[0]
            func nonNil(_ values: PropertyValues) -> [String: PropertyValue] {
                Dictionary(uniqueKeysWithValues: values.map { ($0, $1) }).filter { !$0.value.isNull }
            }
            let stored = try #require(try await store.snapshots(for: [id]).first)
            let reference = try #require(try await store.snapshots(for: [viaContext]).first)
            #expect(stored.version == 1 && reference.version == 1)
            var comparable = nonNil(stored.values)
            var referenceValues = nonNil(reference.values)
            #expect(comparable["canonicalTitle"] != nil, "derived attribute not stored")
            comparable["code"] = nil
            referenceValues["code"] = nil
            #expect(comparable == referenceValues, "sample \(index)")
            #expect((stored.values["code"] ?? .null) == (direct["code"] ?? .null))
            let cached = try #require(container.coordinator.rowCache.cachedSnapshots([id])?.first)
            #expect(cached.version == 1)
            #expect(nonNil(cached.values) == nonNil(stored.values))
        }
        try await container.close()
    }

    @Test func historyRecordsTheSameTransactionAsAContextWould() async throws {
        let directory = TemporaryDirectory()
        let container = try await container(.sqlite, in: directory)
        let store = try #require(container.coordinator.stores[0] as? SQLiteStore)
        let values: [String: PropertyValue] = ["title": .string("Haystacks"), "year": .integer(1890)]
        let context = container.newBackgroundContext(name: "writer", mergePolicy: .error)
        await context.setTransactionAuthor("painter")
        try await context.perform { context in
            let object = try context.insert("Painting")
            for (key, value) in values { try object.setValue(value, forKey: key) }
            try await context.save()
        }
        _ = try #require(try await container.coordinator.insertDirectly([DirectInsert(entity: "Painting", values: values)], author: "painter", contextName: "writer"))
        let history = try await store.history(after: nil, limit: 10)
        try #require(history.count == 2)
        #expect(history[0].author == history[1].author)
        #expect(history[0].contextName == history[1].contextName)
        #expect(history[0].changes.map(\.changedProperties) == history[1].changes.map(\.changedProperties))
        #expect(history[1].changes.map(\.kind) == [.insert])
        try await container.close()
    }

    @Test("Anything a context must decide: nil, and nothing written", arguments: ContextFixture.storeKinds)
    func leavesToAContext(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await container(kind, in: directory)
        let coordinator = container.coordinator
        func refused(_ inserts: [DirectInsert], _ why: String) async throws {
            let result = try await coordinator.insertDirectly(inserts, author: nil, contextName: nil)
            #expect(result == nil, "\(why)")
        }
        let artist = try await container.newBackgroundContext().perform { context in
            let artist = try context.insert("Artist")
            try artist.setValue(.string("Monet"), forKey: "name")
            try await context.save()
            return artist.objectID
        }
        _ = try #require(try await coordinator.insertDirectly([DirectInsert(entity: "Painting", values: ["title": .string("Taken"), "code": .string("TKN")])], author: nil, contextName: nil))
        let before = try await count(container, "Painting")

        try await refused([DirectInsert(entity: "Painting", values: [:])], "mandatory title missing")
        try await refused([DirectInsert(entity: "Painting", values: ["title": .null])], "mandatory title nil")
        try await refused([DirectInsert(entity: "Painting", values: ["title": .string("t"), "year": .integer(3000)])], "year above its maximum")
        try await refused([DirectInsert(entity: "Painting", values: ["title": .string("t"), "year": .integer(40000)])], "year past Integer 16")
        try await refused([DirectInsert(entity: "Painting", values: ["title": .string("t"), "code": .string("abc")])], "code not matching its pattern")
        try await refused([DirectInsert(entity: "Painting", values: ["title": .integer(1)])], "a value of the wrong kind")
        try await refused([DirectInsert(entity: "Painting", values: ["title": .string("t"), "nope": .string("x")])], "an unknown key")
        try await refused([DirectInsert(entity: "Painting", values: ["title": .string("t"), "scratch": .string("y")])], "a transient value")
        try await refused([DirectInsert(entity: "Painting", values: ["title": .string("t"), "artist": .object(artist)])], "a relationship value")
        try await refused([DirectInsert(entity: "Painting", values: ["title": .string("t"), "code": .string("TKN")])], "a uniqueness constraint broken")
        try await refused([DirectInsert(entity: "Painting", values: ["title": .string("ok")]), DirectInsert(entity: "Painting", values: [:])], "one bad object of two")
        try await refused([DirectInsert(entity: "Frame", values: ["wood": .string("oak")])], "a derivation through a relationship")
        try await refused([DirectInsert(entity: "Sketch", values: ["subject": .string("hand")])], "a mandatory relationship")
        try await refused([DirectInsert(entity: "Work", values: [:])], "an abstract entity")
        try await refused([DirectInsert(entity: "Nothing", values: [:])], "an unknown entity")
        try await refused([DirectInsert(entity: "Painting", storeIdentifier: "elsewhere", values: ["title": .string("t")])], "a store that does not hold it")
        try await refused([], "no object")
        try await refused(Array(repeating: DirectInsert(entity: "Painting", values: ["title": .string("t")]), count: Coordinator.directInsertLimit + 1), "too many objects")
        #expect(try await count(container, "Painting") == before)

        // Qualifying entities of other shapes go through.
        _ = try #require(try await coordinator.insertDirectly([DirectInsert(entity: "Print", values: ["label": .string("p"), "copies": .integer(3)])], author: nil, contextName: nil))
        _ = try #require(try await coordinator.insertDirectly([DirectInsert(entity: "Artist", values: ["name": .string("Morisot")])], author: nil, contextName: nil))
        try await container.close()
    }

    @Test("Direct inserts from many tasks at once, beside context saves", arguments: ContextFixture.storeKinds)
    func concurrentDirectInsertsAndContextSaves(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await container(kind, in: directory)
        let coordinator = container.coordinator
        let tasks = 8
        let each = 25
        let ids = try await withThrowingTaskGroup(of: [ObjectID].self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var made: [ObjectID] = []
                    for index in 0..<each {
                        let insert = DirectInsert(entity: "Painting", values: ["title": .string("p\(task)-\(index)"), "year": .integer(Int64(1900 + index))])
                        let result = try #require(try await coordinator.insertDirectly([insert], author: "t\(task)", contextName: nil))
                        made += result.insertedIDs
                    }
                    return made
                }
            }
            group.addTask {
                var made: [ObjectID] = []
                for index in 0..<each {
                    made.append(try await container.newBackgroundContext().perform { context in
                        let object = try context.insert("Painting")
                        try object.setValue(.string("c\(index)"), forKey: "title")
                        try await context.save()
                        return object.objectID
                    })
                }
                return made
            }
            return try await group.reduce(into: [ObjectID]()) { $0 += $1 }
        }
        #expect(ids.count == (tasks + 1) * each)
        #expect(Set(ids).count == ids.count)
        #expect(try await count(container, "Painting") == ids.count)
        try await container.close()
    }

    @Test func aReadOnlyStoreIsLeftToAContext() async throws {
        let directory = TemporaryDirectory()
        let writable = try await container(.sqlite, in: directory)
        try await writable.close()
        let container = try await PersistentContainer(model: Self.model, storeDescriptions: ContextFixture.descriptions(.sqlite, model: Self.model, in: directory.url, readOnly: ["Default"]))
        #expect(try await container.coordinator.insertDirectly([DirectInsert(entity: "Artist", values: ["name": .string("x")])], author: nil, contextName: nil) == nil)
        try await container.close()
    }

    @Test func aStoreThatFailsThrowsAsAContextsSaveDoes() async throws {
        let directory = TemporaryDirectory()
        let container = try await container(.sqlite, in: directory)
        try await container.coordinator.stores[0].close()
        let direct: StrataError? = await {
            do {
                _ = try await container.coordinator.insertDirectly([DirectInsert(entity: "Artist", values: ["name": .string("x")])], author: nil, contextName: nil)
                return nil
            } catch { return error as? StrataError }
        }()
        let viaContext: StrataError? = await {
            do {
                try await container.newBackgroundContext().perform { context in
                    try context.insert("Artist").setValue(.string("x"), forKey: "name")
                    try await context.save()
                }
                return nil
            } catch { return error as? StrataError }
        }()
        let error = try #require(direct)
        #expect(error.code == viaContext?.code)
        #expect(error.message == viaContext?.message)
    }
}
