import Foundation
import Testing
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataSQLite

/// Large saves of new objects into a SQLite store are written while their
/// later chunks are prepared; their answers are those of any other save.
@Suite struct StreamingSaveTests {
    static let count = 5_000

    /// The Books sample: Book on a counted SQLite store (recording
    /// history), Feedback in memory.
    private func books(_ directory: TemporaryDirectory) async throws -> (Coordinator, StreamCountingStore, SQLiteStore) {
        let model = BooksSample.model
        let opened = try await StoreFactory.standard.open(StoreDescription(url: directory.url.appendingPathComponent("Books.sqlite"), type: .sqlite, configuration: "Book"), model: model, transformers: BooksSample.transformers)
        let sqlite = try #require(opened as? SQLiteStore)
        let counted = StreamCountingStore(sqlite)
        let feedback = try await InMemoryStore(description: StoreDescription(url: nil, type: .inMemory, configuration: "Feedback"), model: model)
        let coordinator = try Coordinator(model: model, stores: [counted, feedback], transformers: BooksSample.transformers, transientRules: BooksSample.transientRules)
        return (coordinator, counted, sqlite)
    }

    /// Inserts `count` books ("Crème 0"…, pages 1…); those in `untitled`
    /// get no title (mandatory). Returns their UUIDs in order.
    private static func insertBooks(_ context: isolated Context, count: Int = count, untitled: Set<Int> = [], uuid: (Int) -> UUID = { _ in UUID() }) throws -> [UUID] {
        var uuids: [UUID] = []
        for i in 0..<count {
            let book = try context.insert("Book")
            let id = uuid(i)
            uuids.append(id)
            try book.setValue(.uuid(id), forKey: "uuid")
            if !untitled.contains(i) { try book.setValue(.string("Crème \(i)"), forKey: "title") }
            try book.setValue(.integer(Int64(i + 1)), forKey: "pages")
        }
        return uuids
    }

    /// The error a save throws (nil: it saved).
    private static func saveError(_ context: isolated Context) async -> StrataError? {
        do {
            try await context.save()
            return nil
        } catch {
            return error as? StrataError ?? StrataError(.storeSave, "\(error)")
        }
    }

    private static func storedBooks(_ coordinator: Coordinator) async throws -> Int {
        let reader = Context(coordinator: coordinator, name: "reader")
        return try await reader.perform { try await $0.count(FetchRequest(entityName: "Book")) }
    }

    @Test func aLargeSaveOfNewObjectsIsStreamedAndAnsweredAsUsual() async throws {
        let directory = TemporaryDirectory()
        let (coordinator, counted, sqlite) = try await books(directory)
        let context = Context(coordinator: coordinator, name: "importer", transactionAuthor: "import")
        let (inserted, allSaved, canonical) = try await context.perform { context in
            _ = try Self.insertBooks(context)
            let changes = try await context.save()
            let objects = context.registeredObjects
            let allSaved = objects.count == Self.count && objects.allSatisfy { !$0.objectID.isTemporary && !$0.hasChanges && !$0.isInserted }
            let canonical = try objects.allSatisfy { object in
                guard case .string(let title) = try object.value(forKey: "title") else { return false }
                return try object.value(forKey: "canonicalTitle") == .string(title.replacingOccurrences(of: "Crème", with: "creme"))
            }
            return (changes.inserted.count, allSaved, canonical)
        }
        #expect(inserted == Self.count)
        #expect(allSaved)
        #expect(canonical)
        #expect(await counted.streamedSaves == 1)
        #expect(await counted.wholeSaves == 0)

        // Read back by another context: every row and its derived value.
        let reader = Context(coordinator: coordinator, name: "reader")
        let rows = try await reader.perform { context in
            try await context.fetch(FetchRequest(entityName: "Book", format: "canonicalTitle BEGINSWITH 'creme '", sortDescriptors: [StrataQuery.SortDescriptor("pages")]))
                .map { try $0.value(forKey: "pages") }
        }
        #expect(rows == (1...Self.count).map { .integer(Int64($0)) })
        // History names every insert, in one transaction by its author.
        let history = try await sqlite.history(after: nil, limit: 10)
        #expect(history.count == 1)
        #expect(history.first?.changes.count == Self.count)
        #expect(history.first?.author == "import")
    }

    @Test func oneInvalidObjectLateInTheStreamWritesNothingAndKeepsTheChanges() async throws {
        let directory = TemporaryDirectory()
        let (coordinator, counted, _) = try await books(directory)
        let context = Context(coordinator: coordinator, name: "importer")
        let late = Self.count - 10
        let error = try await context.perform { context in
            _ = try Self.insertBooks(context, untitled: [late])
            return await Self.saveError(context)
        }
        #expect(error?.code == .validationMissingMandatoryProperty)
        #expect(error?.message.contains("Book.title") == true)
        #expect(try await Self.storedBooks(coordinator) == 0)
        #expect(await counted.streamedSaves == 1)
        let kept = await context.perform { $0.insertedObjects.count }
        #expect(kept == Self.count)

        // Fixed, the same objects save.
        try await context.perform { context in
            let untitled = try context.insertedObjects.filter { try $0.value(forKey: "title") == .null }
            #expect(untitled.count == 1)
            try untitled.first?.setValue(.string("Late"), forKey: "title")
            try await context.save()
        }
        #expect(try await Self.storedBooks(coordinator) == Self.count)
    }

    /// The stream stops at the first problem (in the second chunk); the
    /// error lists every problem of the save.
    @Test func invalidObjectsInSeveralChunksAre1560ListingEach() async throws {
        let directory = TemporaryDirectory()
        let (coordinator, counted, _) = try await books(directory)
        let context = Context(coordinator: coordinator, name: "importer")
        let error = try await context.perform { context in
            _ = try Self.insertBooks(context, untitled: [1_500, 3_000, Self.count - 1])
            return await Self.saveError(context)
        }
        #expect(await counted.streamedSaves == 1)
        #expect(error?.code == .multipleValidationErrors)
        #expect(error?.failures.count == 3)
        #expect(try await Self.storedBooks(coordinator) == 0)
    }

    /// A model whose derived value can fail: `scaled` (Integer 16) is
    /// derived from `pages` (Integer 64), which may not fit 16 bits.
    private static let ledger = ObjectModel(name: "Ledger", entities: [
        EntityDescription(name: "Entry", attributes: [
            AttributeDescription(name: "pages", type: .integer64),
            AttributeDescription(name: "scaled", type: .integer16, isOptional: true, isDerived: true, derivationExpression: "pages"),
        ]),
    ])

    /// The error saving `count` entries throws when the one at `failing`
    /// has too many pages for its derived value, with what the store then
    /// holds; then the same save with that entry fixed.
    private static func saveLedger(count: Int, failing: Int, in directory: TemporaryDirectory) async throws -> (error: StrataError?, stored: Int, kept: Int, streamed: Int, storedAfterFix: Int) {
        let opened = try await StoreFactory.standard.open(StoreDescription(url: directory.url.appendingPathComponent("Ledger-\(count).sqlite"), type: .sqlite), model: ledger)
        let counted = StreamCountingStore(try #require(opened as? SQLiteStore))
        let coordinator = try Coordinator(model: ledger, stores: [counted])
        let context = Context(coordinator: coordinator, name: "importer")
        let count = count
        let (error, kept) = try await context.perform { context in
            for index in 0..<count {
                let entry = try context.insert("Entry")
                try entry.setValue(.integer(index == failing ? 100_000 : 1), forKey: "pages")
            }
            return (await Self.saveError(context), context.insertedObjects.count)
        }
        // Counted by another context (the importer's count includes its own inserts).
        let reader = Context(coordinator: coordinator, name: "reader")
        let stored = try await reader.perform { try await $0.count(FetchRequest(entityName: "Entry")) }
        let streamed = await counted.streamedSaves
        try await context.perform { context in
            for entry in context.insertedObjects { try entry.setValue(.integer(2), forKey: "pages") }
            try await context.save()
        }
        let storedAfterFix = try await reader.perform { try await $0.count(FetchRequest(entityName: "Entry", format: "scaled == 2")) }
        return (error, stored, kept, streamed, storedAfterFix)
    }

    /// A derivation that fails in a later chunk stops the stream: the
    /// store writes nothing (not even the chunks already supplied), the
    /// save throws what the usual save throws, and the context keeps its
    /// objects.
    @Test func aDerivationFailingLateInTheStreamWritesNothing() async throws {
        let directory = TemporaryDirectory()
        let late = Self.count - 10
        let streamedSave = try await Self.saveLedger(count: Self.count, failing: late, in: directory)
        let usualSave = try await Self.saveLedger(count: 10, failing: 5, in: directory)

        #expect(streamedSave.streamed == 1)
        #expect(usualSave.streamed == 0)
        let error = try #require(streamedSave.error)
        #expect(error.code == usualSave.error?.code)
        #expect(error.message.contains("scaled"))
        #expect(streamedSave.stored == 0)
        #expect(streamedSave.kept == Self.count)
        #expect(streamedSave.storedAfterFix == Self.count)
        #expect(usualSave.stored == 0)
        #expect(usualSave.storedAfterFix == 10)
    }

    /// A closed store fails the streamed save at once (no wait for the
    /// feed) and the context keeps its changes.
    @Test func aClosedStoreFailsTheStreamedSave() async throws {
        let directory = TemporaryDirectory()
        let (coordinator, counted, sqlite) = try await books(directory)
        try await sqlite.close()
        let context = Context(coordinator: coordinator, name: "importer")
        let (error, kept) = try await context.perform { context in
            _ = try Self.insertBooks(context)
            return (await Self.saveError(context), context.insertedObjects.count)
        }
        #expect(await counted.streamedSaves == 1)
        #expect(error?.code == .storeOpen)
        #expect(error?.message.contains("save failed in store") == true)
        #expect(kept == Self.count)
    }

    /// Small saves of other contexts go on while a streamed save is
    /// written (each in its own group); all of them commit.
    @Test func otherContextsSaveWhileASaveStreams() async throws {
        let directory = TemporaryDirectory()
        let (coordinator, counted, _) = try await books(directory)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let context = Context(coordinator: coordinator, name: "importer")
                try await context.perform { context in
                    _ = try Self.insertBooks(context)
                    try await context.save()
                }
            }
            for writer in 0..<3 {
                group.addTask {
                    let context = Context(coordinator: coordinator, name: "writer \(writer)")
                    try await context.perform { context in
                        for _ in 0..<10 {
                            _ = try Self.insertBooks(context, count: 2)
                            try await context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await counted.streamedSaves == 1)
        #expect(await counted.wholeSaves == 30)
        #expect(try await Self.storedBooks(coordinator) == Self.count + 60)
    }

    @Test(arguments: [MergePolicy.error, .mergeByPropertyObjectTrump])
    func aUniquenessConflictIsResolvedByTheMergePolicy(policy: MergePolicy) async throws {
        let directory = TemporaryDirectory()
        let (coordinator, counted, _) = try await books(directory)
        let taken = UUID()
        let first = Context(coordinator: coordinator, name: "first")
        try await first.perform { context in
            let book = try context.insert("Book")
            try book.setValue(.uuid(taken), forKey: "uuid")
            try book.setValue(.string("Old"), forKey: "title")
            try await context.save()
        }
        let context = Context(coordinator: coordinator, name: "importer", mergePolicy: policy)
        let outcome = await context.perform { context in
            do {
                _ = try Self.insertBooks(context, uuid: { $0 == 7 ? taken : UUID() })
                try await context.save()
                return nil as StrataError.Code?
            } catch {
                return (error as? StrataError)?.code ?? .storeSave
            }
        }
        #expect(await counted.streamedSaves == 1)
        if policy == .error {
            #expect(outcome == .constraintConflict)
            #expect(await counted.wholeSaves == 1)
            #expect(try await Self.storedBooks(coordinator) == 1)
        } else {
            // The insert became an update of the existing book, saved the
            // usual way.
            #expect(outcome == nil)
            #expect(await counted.wholeSaves == 2)
            #expect(try await Self.storedBooks(coordinator) == Self.count)
            let title = try await Context(coordinator: coordinator).perform { context in
                try await context.fetch(FetchRequest(entityName: "Book", format: "uuid == $UUID"), variables: ["UUID": .value(.uuid(taken))]).first?.value(forKey: "title")
            }
            #expect(title == .string("Crème 7"))
        }
    }

    @Test func smallSavesAndSavesWithUpdatesAreWrittenWhole() async throws {
        let directory = TemporaryDirectory()
        let (coordinator, counted, _) = try await books(directory)
        let context = Context(coordinator: coordinator, name: "importer")
        try await context.perform { context in
            _ = try Self.insertBooks(context, count: 100)
            try await context.save()
            // An update among many inserts: not only new objects.
            try context.registeredObjects.first?.setValue(.integer(9_999), forKey: "pages")
            _ = try Self.insertBooks(context, count: Self.count)
            try await context.save()
        }
        #expect(await counted.streamedSaves == 0)
        #expect(await counted.wholeSaves == 2)
        #expect(try await Self.storedBooks(coordinator) == Self.count + 100)
    }
}
