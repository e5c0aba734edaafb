import Foundation
import Testing
import StrataContext
import StrataModel
import StrataQuery
import StrataStore
import StrataSQLite

/// The registry keeps inserted objects in a list and indexes them by
/// temporary ID only at the first lookup; saved objects are filed by store,
/// entity and key. These tests go through every path between the two.
@Suite struct ObjectRegistryTests {
    private func insertAuthors(_ context: isolated Context, _ names: Range<Int>) throws -> [ManagedObject] {
        try names.map { index in
            let author = try context.insert("Author")
            try author.setValue(.string("author \(index)"), forKey: "name")
            return author
        }
    }

    @Test(arguments: ContextFixture.storeKinds)
    func insertedObjectsAreFoundBeforeAndAfterTheirSave(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        try await container.viewContext.perform { context in
            var authors = try insertAuthors(context, 0..<100)
            // The first lookup by temporary ID builds the index; later
            // inserts and removals keep it.
            #expect(context.object(with: authors[50].objectID) === authors[50])
            authors += try insertAuthors(context, 100..<110)
            #expect(context.object(with: authors[105].objectID) === authors[105])
            // Inserted then deleted: unregistered at the save.
            let dropped = authors.remove(at: 10)
            try await context.delete(dropped)
            #expect(context.registeredObjects.count == 110)
            #expect(context.insertedObjects.count == 109)

            let temporaryIDs = authors.map(\.objectID)
            let changes = try await context.save()
            #expect(changes.inserted.count == 109)
            #expect(context.registeredObjects.count == 109)
            #expect(context.insertedObjects.isEmpty)
            let hasChanges = context.hasChanges
            #expect(!hasChanges)
            for (author, temporaryID) in zip(authors, temporaryIDs) {
                #expect(!author.objectID.isTemporary)
                #expect(author.objectID != temporaryID)
                #expect(context.object(with: author.objectID) === author)
            }
            #expect(Set(changes.inserted) == Set(authors.map(\.objectID)))
            // A temporary ID the save replaced names no registered object.
            #expect(!context.registeredObjects.contains { $0.objectID == temporaryIDs[0] })
        }
    }

    /// A save takes the objects it saved off the list of changed objects:
    /// the whole list at once after a bulk insert, only those objects
    /// after a save that also deletes. Either way, an object changed
    /// afterwards is listed once and saved once.
    @Test(arguments: ContextFixture.storeKinds)
    func savedObjectsLeaveTheChangedListAndComeBackOnceWhenChanged(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        try await container.viewContext.perform { context in
            // Inserts only.
            let first = try insertAuthors(context, 0..<20)
            _ = try await context.save()
            let clean1 = context.hasChanges
            #expect(!clean1)
            #expect(context.updatedObjects.isEmpty)

            // Inserts, an update and a delete in one save.
            let second = try insertAuthors(context, 20..<30)
            try first[0].setValue(.string("renamed"), forKey: "name")
            try await context.delete(first[1])
            let changes = try await context.save()
            #expect(changes.inserted.count == 10)
            #expect(changes.deleted.count == 1)
            let clean2 = context.hasChanges
            #expect(!clean2)

            // Changed again: each listed and saved once.
            try first[0].setValue(.string("again"), forKey: "name")
            try first[2].setValue(.string("again"), forKey: "name")
            try second[0].setValue(.string("again"), forKey: "name")
            let updated = context.updatedObjects
            #expect(updated.count == 3)
            #expect(Set(updated.map(\.objectID)).count == 3)
            let third = try await context.save()
            #expect(third.updated.count == 3)
            let clean3 = context.hasChanges
            #expect(!clean3)
            #expect(first[0].persistedVersion == 3)
            #expect(second[0].persistedVersion == 2)
        }
    }

    @Test(arguments: ContextFixture.storeKinds)
    func objectsInsertedWhileOthersAreSavedKeepTheirTemporaryIDs(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        try await container.viewContext.perform { context in
            let saved = try insertAuthors(context, 0..<5)
            _ = try await context.save()
            let pending = try insertAuthors(context, 5..<8)
            #expect(context.object(with: pending[1].objectID) === pending[1])
            _ = try await context.save()
            #expect(context.registeredObjects.count == 8)
            for author in saved + pending {
                #expect(!author.objectID.isTemporary)
                #expect(context.object(with: author.objectID) === author)
            }
            // A fresh context sees them all, each once.
            let other = container.newBackgroundContext()
            let names = try await other.perform { other in
                try await other.fetch(FetchRequest(entityName: "Author", format: "TRUEPREDICATE")).map { try $0.value(forKey: "name") }
            }
            #expect(names.count == 8)
        }
    }

    @Test func resetForgetsEveryObjectAndANewFaultIsMadeAfterwards() async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(.sqlite, in: directory)
        try await container.viewContext.perform { context in
            let authors = try insertAuthors(context, 0..<3)
            _ = try await context.save()
            let id = authors[0].objectID
            _ = try insertAuthors(context, 3..<4)
            context.reset()
            #expect(context.registeredObjects.isEmpty)
            let fault = context.object(with: id)
            #expect(fault !== authors[0])
            #expect(fault.isFault)
            #expect(context.object(with: id) === fault)
            try await context.load(fault)
            #expect(try fault.value(forKey: "name") == .string("author 0"))
        }
    }

    /// An entity with no relationship still holds object IDs in an
    /// Undefined attribute (here transient): the save rewrites them too.
    @Test func idsInUndefinedAttributesOfEntitiesWithoutRelationshipsBecomePermanent() async throws {
        let model = ObjectModel(name: "Pins", entities: [
            EntityDescription(name: "Note", attributes: [
                .init(name: "text", type: .string, isOptional: true),
                .init(name: "pin", type: .undefined, isOptional: true, isTransient: true),
            ]),
        ])
        let directory = TemporaryDirectory()
        let container = try await PersistentContainer(model: model, storeDescriptions: ContextFixture.descriptions(.sqlite, model: model, in: directory.url), factory: .standard)
        try await container.viewContext.perform { context in
            let pinned = try context.insert("Note")
            let note = try context.insert("Note")
            try note.setValue(.object(pinned.objectID), forKey: "pin")
            _ = try await context.save()
            #expect(!pinned.objectID.isTemporary)
            #expect(try note.value(forKey: "pin") == .object(pinned.objectID))
        }
    }

    /// Inserted objects are at version 1 without being listed in
    /// `versions`; an explicit version wins.
    @Test func changeSetVersionsOfInsertsAndUpdates() {
        let inserted = ObjectID(storeIdentifier: "s", entityName: "Author", key: .permanent(1))
        let explicit = ObjectID(storeIdentifier: "s", entityName: "Author", key: .permanent(2))
        let updated = ObjectID(storeIdentifier: "s", entityName: "Author", key: .permanent(3))
        let other = ObjectID(storeIdentifier: "s", entityName: "Author", key: .permanent(4))
        let changes = ChangeSet(inserted: [inserted, explicit], updated: [updated: ["name"]], versions: [explicit: 3, updated: 5])
        #expect(changes.version(of: inserted) == 1)
        #expect(changes.version(of: explicit) == 3)
        #expect(changes.version(of: updated) == 5)
        #expect(changes.version(of: other) == nil)
    }
}
