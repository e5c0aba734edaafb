import Foundation
import Testing
import StrataContext
import StrataModel
import StrataQuery
import StrataStore
import StrataSQLite

@Suite struct ConflictAndMergeTests {
    /// Saves a book with a title and pages in `context`; returns its ID.
    private func seed(_ context: Context) async throws -> ObjectID {
        try await context.perform { context in
            let book = try context.insert("Book")
            try book.setValue(.string("Original"), forKey: "title")
            try book.setValue(.integer(100), forKey: "pages")
            try await context.save()
            return book.objectID
        }
    }

    /// A reads the book, B changes its title and saves, then A changes
    /// (title and pages) and saves under `policy`. Returns the stored title
    /// and pages afterwards, or the error code.
    private func conflict(_ kind: StoreDescription.StoreType, policy: MergePolicy) async throws -> (String, Int64, Int?, StrataError?) {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let id = try await seed(container.viewContext)
        let a = container.newBackgroundContext(name: "A", mergePolicy: policy)
        let b = container.newBackgroundContext(name: "B")
        try await a.perform { a in _ = try await a.existingObject(with: id) }
        try await b.perform { b in
            let book = try await b.existingObject(with: id)
            try book.setValue(.string("From B"), forKey: "title")
            try await b.save()
        }
        var failure: StrataError?
        do {
            try await a.perform { a in
                let book = a.object(with: id)
                try book.setValue(.string("From A"), forKey: "title")
                try book.setValue(.integer(200), forKey: "pages")
                try await a.save()
            }
        } catch let error as StrataError {
            failure = error
        }
        let check = container.newBackgroundContext()
        let (title, pages, version): (String, Int64, Int?) = try await check.perform { check in
            let book = try await check.existingObject(with: id)
            guard case .string(let title) = book["title"], case .integer(let pages) = book["pages"] else { return ("?", -1, nil) }
            return (title, pages, Int(book.persistedVersion))
        }
        try await container.close()
        return (title, pages, version, failure)
    }

    @Test(arguments: ContextFixture.storeKinds)
    func errorPolicyCarriesEveryConflict(kind: StoreDescription.StoreType) async throws {
        let (title, pages, _, error) = try await conflict(kind, policy: .error)
        #expect(title == "From B" && pages == 100)
        let failure = try #require(error)
        #expect(failure.code == .mergeConflict)
        #expect(failure.conflicts.count == 1)
        let record = try #require(failure.conflicts.first)
        #expect(record.expectedVersion == 1 && record.currentVersion == 2)
        #expect(record.cachedValues["title"] == .string("Original"))
        #expect(record.persistedValues?["title"] == .string("From B"))
        #expect(record.localChanges["title"] == .string("From A"))
    }

    @Test(arguments: ContextFixture.storeKinds)
    func storeTrumpKeepsStoreChangesAndOtherLocalOnes(kind: StoreDescription.StoreType) async throws {
        let (title, pages, version, error) = try await conflict(kind, policy: .mergeByPropertyStoreTrump)
        #expect(error == nil)
        #expect(title == "From B" && pages == 200 && version == 3)
    }

    @Test(arguments: ContextFixture.storeKinds)
    func objectTrumpKeepsLocalChanges(kind: StoreDescription.StoreType) async throws {
        let (title, pages, _, error) = try await conflict(kind, policy: .mergeByPropertyObjectTrump)
        #expect(error == nil)
        #expect(title == "From A" && pages == 200)
    }

    @Test(arguments: ContextFixture.storeKinds)
    func overwriteWritesWholeState(kind: StoreDescription.StoreType) async throws {
        let (title, pages, _, error) = try await conflict(kind, policy: .overwrite)
        #expect(error == nil)
        #expect(title == "From A" && pages == 200)
    }

    @Test(arguments: ContextFixture.storeKinds)
    func rollbackDropsLocalChanges(kind: StoreDescription.StoreType) async throws {
        let (title, pages, version, error) = try await conflict(kind, policy: .rollback)
        #expect(error == nil)
        #expect(title == "From B" && pages == 100 && version == 2)
    }

    @Test(arguments: ContextFixture.storeKinds)
    func otherContextsMergeSavedChanges(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let id = try await seed(container.viewContext)
        let reader = container.newBackgroundContext(name: "reader")
        let writer = container.newBackgroundContext(name: "writer")
        try await reader.perform { reader in _ = try await reader.existingObject(with: id) }
        let changes = try await writer.perform { writer in
            let book = try await writer.existingObject(with: id)
            try book.setValue(.string("Merged"), forKey: "title")
            let extra = try writer.insert("Book")
            try extra.setValue(.string("New"), forKey: "title")
            return try await writer.save()
        }
        #expect(changes.updated[id] == ["title"])
        try await reader.merge(changes)
        let title = await reader.perform { reader in "\(reader.object(with: id)["title"])" }
        #expect(title == "\"Merged\"")

        // Deletes are merged too, and automatic merging follows the hub.
        await reader.automaticallyMergeChanges()
        try await writer.perform { writer in
            try await writer.delete(writer.object(with: id))
            try await writer.save()
        }
        var registered = true
        for _ in 0..<200 where registered {
            registered = await reader.perform { reader in reader.registeredObjects.contains { $0.objectID == id } }
            if registered { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(!registered)
        try await container.close()
    }

    @Test func crossStoreRelationshipIsRefused() async throws {
        let model = ObjectModel(name: "Split", entities: [
            EntityDescription(name: "Owner", attributes: [.init(name: "name", type: .string)], relationships: [
                .init(name: "pets", destination: "Pet", inverse: "owner", toMany: true),
            ]),
            EntityDescription(name: "Pet", attributes: [.init(name: "name", type: .string)], relationships: [
                .init(name: "owner", destination: "Owner", inverse: "pets"),
            ]),
        ], configurations: [
            ConfigurationDescription(name: "People", entities: ["Owner"]),
            ConfigurationDescription(name: "Animals", entities: ["Pet"]),
        ])
        let container = try await PersistentContainer(model: model, storeDescriptions: [.inMemory(configuration: "People"), .inMemory(configuration: "Animals")], factory: .standard)
        let result: [Int] = try await container.viewContext.perform { context in
            let owner = try context.insert("Owner")
            try owner.setValue(.string("Ann"), forKey: "name")
            let pet = try context.insert("Pet")
            try pet.setValue(.string("Rex"), forKey: "name")
            try pet.setValue(.object(owner.objectID), forKey: "owner")
            var codes: [Int] = []
            do { try await context.save() } catch let error as StrataError { codes.append(error.code.rawValue) }
            codes.append(try await context.count(FetchRequest(entityName: "Owner")))
            return codes
        }
        // The count includes the unsaved insert; the stores hold nothing.
        #expect(result == [133010, 1])
        for store in container.coordinator.stores {
            for entity in store.entityNames {
                let resolved = try container.coordinator.resolver.resolve(FetchRequest(entityName: entity))
                #expect(try await store.count(resolved) == 0)
            }
        }
        try await container.close()
    }
}
