import Foundation
import StrataContext
import StrataModel
import StrataQuery
import StrataStore
import StrataSQLite
import Testing

/// `Coordinator.save(_:)`, the one entry point for saves described by
/// value, against what a fresh context saves for the same objects: on its
/// direct route the same rows, change sets and history;
/// on either route the same errors.
@Suite struct CoordinatorSaveTests {
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
        try await PersistentContainer(model: Self.model, storeDescriptions: ContextFixture.descriptions(kind, model: Self.model, in: directory.url), factory: .standard, rowCacheCapacity: 1000)
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

    @Test("What a context would save: rows, change set; the row cache filled by reads only", arguments: ContextFixture.storeKinds)
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
            let result = try await container.coordinator.save(SaveRequest(inserts: [.init(id: .temporary(entityName: "Painting"), values: direct)], author: "direct"))
            #expect(result.route == .direct)
            let id = try #require(result.insertedIDs.first)
            #expect(!id.isTemporary)
            #expect(result.changes.inserted == [id])
            #expect(result.changes.contextName == "direct")
            let heard = await published.next()
            #expect(heard?.inserted == [id])
            #expect(heard?.version(of: id) == 1)

            // The same stored values (the code apart), read from the store
            // itself. Saves add no rows to the row cache: the first read by
            // ID does, as the store holds the row.
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
            #expect(container.coordinator.rowCache.cachedSnapshots([id]) == nil, "a direct save added its row to the cache")
            #expect(container.coordinator.rowCache.cachedSnapshots([viaContext]) == nil, "a context's save added its row to the cache")
            _ = try await container.coordinator.snapshots(for: [id], in: store)
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
        let context = container.newBackgroundContext(name: "painter", mergePolicy: .error)
        await context.setTransactionAuthor("painter")
        try await context.perform { context in
            let object = try context.insert("Painting")
            for (key, value) in values { try object.setValue(value, forKey: key) }
            try await context.save()
        }
        let direct = try await container.coordinator.save(SaveRequest(inserts: [.init(id: .temporary(entityName: "Painting"), values: values)], author: "painter"))
        #expect(direct.route == .direct)
        let history = try await store.history(after: nil, limit: 10)
        try #require(history.count == 2)
        #expect(history[0].author == history[1].author)
        #expect(history[0].contextName == history[1].contextName)
        #expect(history[0].changes.map(\.changedProperties) == history[1].changes.map(\.changedProperties))
        #expect(history[1].changes.map(\.kind) == [.insert])
        try await container.close()
    }

    /// One insert of `entity` with `values`.
    static func insert(_ entity: String, _ values: [String: PropertyValue], store: String? = nil) -> SaveRequest.Insert {
        SaveRequest.Insert(id: .temporary(entityName: entity), storeIdentifier: store, values: values)
    }

    /// How a save ended, comparable across routes: the error's code and
    /// its failures (property, code), or the number of objects inserted.
    enum Ending: Equatable {
        case saved(inserted: Int)
        case refused(StrataError.Code, [String])
    }

    static func ending(_ error: any Error) -> Ending {
        guard let error = error as? StrataError else { return .refused(.storeSave, ["\(error)"]) }
        return .refused(error.code, error.failures.map { "\($0.property) \($0.code)" })
    }

    @Test("Saves a context must decide end as a context's save does", arguments: ContextFixture.storeKinds)
    func endsAsAContextDoes(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await container(kind, in: directory)
        let coordinator = container.coordinator
        let artist = try await container.newBackgroundContext().perform { context in
            let artist = try context.insert("Artist")
            try artist.setValue(.string("Monet"), forKey: "name")
            try await context.save()
            return artist.objectID
        }
        #expect(try await coordinator.save(SaveRequest(inserts: [Self.insert("Painting", ["title": .string("Taken"), "code": .string("TKN")])])).route == .direct)

        /// The same inserts through `Coordinator.save` and through a
        /// context (values set in name order), on the same data.
        func compare(_ inserts: [(String, [String: PropertyValue], String?)], _ why: String, route expected: SaveOutcome.Route? = nil) async throws {
            let before = try await count(container, "Painting")
            let viaSave: Ending
            do {
                let outcome = try await coordinator.save(SaveRequest(inserts: inserts.map { Self.insert($0.0, $0.1, store: $0.2) }))
                viaSave = .saved(inserted: outcome.insertedIDs.count)
                if let expected { #expect(outcome.route == expected, "\(why)") }
            } catch {
                viaSave = Self.ending(error)
                #expect(try await count(container, "Painting") == before, "\(why): a refused save wrote nothing")
            }
            // The entry point for callers that are not tasks ends the same way.
            switch await Self.saved(coordinator, SaveRequest(inserts: inserts.map { Self.insert($0.0, $0.1, store: $0.2) })) {
            case .success(let outcome):
                #expect(viaSave == .saved(inserted: outcome.insertedIDs.count), "\(why): with a completion handler")
                if let expected { #expect(outcome.route == expected, "\(why): with a completion handler") }
            case .failure(let error):
                #expect(viaSave == Self.ending(error), "\(why): with a completion handler")
                #expect(try await count(container, "Painting") == before, "\(why): a refused save wrote nothing, with a completion handler")
            }
            let viaContext: Ending = await {
                do {
                    return .saved(inserted: try await container.newBackgroundContext().perform { context in
                        for (entity, values, store) in inserts {
                            let object = try context.insert(entity, into: store)
                            for key in values.keys.sorted() {
                                // As the request applies them: a transient value is refused.
                                if entity == "Painting", key == "scratch" { throw StrataError(.invalidValue, "transient") }
                                try object.setValue(values[key] ?? .null, forKey: key)
                            }
                        }
                        try await context.save()
                        return inserts.count
                    })
                } catch { return Self.ending(error) }
            }()
            #expect(viaSave == viaContext, "\(why)")
        }

        try await compare([("Painting", [:], nil)], "mandatory title missing", route: .direct)
        try await compare([("Painting", ["title": .null], nil)], "mandatory title nil")
        try await compare([("Painting", ["title": .string("t"), "year": .integer(3000)], nil)], "year above its maximum")
        try await compare([("Painting", ["title": .string("t"), "year": .integer(40000)], nil)], "year past Integer 16")
        try await compare([("Painting", ["title": .string("t"), "code": .string("abc")], nil)], "code not matching its pattern")
        try await compare([("Painting", ["title": .integer(1)], nil)], "a value of the wrong kind")
        try await compare([("Painting", ["title": .string("t"), "nope": .string("x")], nil)], "an unknown key")
        try await compare([("Painting", ["title": .string("t"), "scratch": .string("y")], nil)], "a transient value")
        try await compare([("Painting", ["title": .string("t"), "code": .string("TKN")], nil)], "a uniqueness constraint broken")
        try await compare([("Painting", ["title": .string("ok")], nil), ("Painting", [:], nil), ("Painting", ["year": .integer(1)], nil)], "two bad objects of three")
        try await compare([("Sketch", ["subject": .string("hand")], nil)], "a mandatory relationship")
        try await compare([("Work", [:], nil)], "an abstract entity")
        try await compare([("Nothing", [:], nil)], "an unknown entity")
        try await compare([("Painting", ["title": .string("t")], "elsewhere")], "a store that does not hold it")
        // Saved through a context.
        try await compare([("Painting", ["title": .string("t"), "artist": .object(artist)], nil)], "a relationship value", route: .context)
        try await compare([("Frame", ["wood": .string("oak")], nil)], "a derivation through a relationship", route: .context)
        try await compare(Array(repeating: ("Painting", ["title": .string("t")], nil), count: Coordinator.directInsertLimit + 1), "too many objects", route: .context)
        // Other shapes of qualifying entities go straight through.
        try await compare([("Print", ["label": .string("p"), "copies": .integer(3)], nil)], "a subentity", route: .direct)
        try await compare([("Artist", ["name": .string("Morisot")], nil)], "an optional to-many", route: .direct)
        try await container.close()
    }

    /// ``Coordinator/save(_:finish:completion:)``'s result, awaited.
    static func saved(_ coordinator: Coordinator, _ request: SaveRequest) async -> Result<SaveOutcome, any Error> {
        await withCheckedContinuation { continuation in
            coordinator.save(request, finish: { $0() }) { continuation.resume(returning: $0) }
        }
    }

    @Test("With a completion handler: the direct route with no task, a resolved conflict through a context", arguments: ContextFixture.storeKinds)
    func completionHandlerSaves(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await container(kind, in: directory)
        let coordinator = container.coordinator
        let changes = coordinator.changes.subscribe()
        let first = try await Self.saved(coordinator, SaveRequest(inserts: [Self.insert("Painting", ["title": .string("Old"), "code": .string("DUP")])])).get()
        #expect(first.route == .direct)
        let existing = try #require(first.insertedIDs.first)
        #expect(!existing.isTemporary)
        // Published as the awaited direct route publishes it.
        var published = changes.makeAsyncIterator()
        #expect(await published.next()?.inserted == [existing])
        var request = SaveRequest(inserts: [Self.insert("Painting", ["title": .string("New"), "code": .string("DUP")])])
        request.mergePolicy = .mergeByPropertyObjectTrump
        let merged = try await Self.saved(coordinator, request).get()
        #expect(merged.route == .context)
        #expect(merged.insertedIDs == [existing])
        let stored = try #require(try await coordinator.stores[0].snapshots(for: [existing]).first)
        #expect(stored.values["title"] == .string("New"))
        #expect(try await count(container, "Painting") == 1)
        try await container.close()
    }

    @Test("A uniqueness conflict the merge policy resolves is saved through a context, with the checked values")
    func resolvedConflictsGoThroughAContext() async throws {
        let directory = TemporaryDirectory()
        let container = try await container(.sqlite, in: directory)
        let coordinator = container.coordinator
        let first = try await coordinator.save(SaveRequest(inserts: [Self.insert("Painting", ["title": .string("Old"), "code": .string("DUP")])]))
        let existing = try #require(first.insertedIDs.first)
        var request = SaveRequest(inserts: [Self.insert("Painting", ["title": .string("New"), "code": .string("DUP"), "year": .integer(1999)])])
        request.mergePolicy = .mergeByPropertyObjectTrump
        let outcome = try await coordinator.save(request)
        #expect(outcome.route == .context)
        #expect(outcome.insertedIDs == [existing])
        let stored = try #require(try await container.coordinator.stores[0].snapshots(for: [existing]).first)
        #expect(stored.values["title"] == .string("New"))
        #expect(stored.values["year"] == .integer(1999))
        // The derived value was computed from the merged title.
        #expect(stored.values["canonicalTitle"] == .string("new"))
        #expect(try await count(container, "Painting") == 1)
        try await container.close()
    }

    @Test("Updates, deletes and references to the request's own inserts")
    func updatesDeletesAndReferences() async throws {
        let directory = TemporaryDirectory()
        let container = try await container(.sqlite, in: directory)
        let coordinator = container.coordinator
        let saved = try await coordinator.save(SaveRequest(inserts: [Self.insert("Painting", ["title": .string("A")]), Self.insert("Painting", ["title": .string("B")])]))
        let (a, b) = (saved.insertedIDs[0], saved.insertedIDs[1])
        let artist = Self.insert("Artist", ["name": .string("Degas")])
        let outcome = try await coordinator.save(SaveRequest(
            inserts: [artist],
            updates: [SaveRequest.Update(id: a, values: ["artist": .object(artist.id), "year": .integer(1874)])],
            deletes: [SaveRequest.Delete(id: b)]
        ))
        #expect(outcome.route == .context)
        let artistID = try #require(outcome.insertedIDs.first)
        #expect(!artistID.isTemporary)
        #expect(outcome.changes.deleted == [b])
        #expect(outcome.changes.updated[a] != nil)
        let stored = try #require(try await container.coordinator.stores[0].snapshots(for: [a]).first)
        #expect(stored.values["artist"] == .object(artistID))
        #expect(stored.values["year"] == .integer(1874))
        #expect(try await container.coordinator.stores[0].snapshots(for: [b]).isEmpty)
        // Two inserts with one ID, or a saved ID as a new one: refused.
        let twice = Self.insert("Painting", ["title": .string("C")])
        await #expect(throws: StrataError.self) { try await coordinator.save(SaveRequest(inserts: [twice, twice])) }
        await #expect(throws: StrataError.self) { try await coordinator.save(SaveRequest(inserts: [SaveRequest.Insert(id: a, values: [:])])) }
        // A deleted object is gone: 133000.
        do {
            _ = try await coordinator.save(SaveRequest(updates: [SaveRequest.Update(id: b, values: ["year": .integer(1900)])]))
            Issue.record("an update of a deleted object was saved")
        } catch let error as StrataError {
            #expect(error.code == .objectNotFound)
        }
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
                        let insert = Self.insert("Painting", ["title": .string("p\(task)-\(index)"), "year": .integer(Int64(1900 + index))])
                        let result = try await coordinator.save(SaveRequest(inserts: [insert], author: "t\(task)"))
                        #expect(result.route == .direct)
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

    @Test func aReadOnlyStoreIsRefusedAsAContextRefusesIt() async throws {
        let directory = TemporaryDirectory()
        let writable = try await container(.sqlite, in: directory)
        try await writable.close()
        let container = try await PersistentContainer(model: Self.model, storeDescriptions: ContextFixture.descriptions(.sqlite, model: Self.model, in: directory.url, readOnly: ["Default"]), factory: .standard)
        await #expect(throws: StrataError.self) { try await container.coordinator.save(SaveRequest(inserts: [Self.insert("Artist", ["name": .string("x")])])) }
        try await container.close()
    }

    @Test func aStoreThatFailsThrowsAsAContextsSaveDoes() async throws {
        let directory = TemporaryDirectory()
        let container = try await container(.sqlite, in: directory)
        try await container.coordinator.stores[0].close()
        let direct: StrataError? = await {
            do {
                _ = try await container.coordinator.save(SaveRequest(inserts: [Self.insert("Artist", ["name": .string("x")])]))
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
