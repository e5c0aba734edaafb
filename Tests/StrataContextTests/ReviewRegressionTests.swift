import Foundation
import Testing
import StrataContext
import StrataModel
import StrataQuery
import StrataStore

/// Regressions for review findings on the context.
@Suite struct ReviewRegressionTests {
    /// A remote client read version 1 (name "a") and writes "b"; meanwhile
    /// another writer saved "b" (version 2), which is what the server's
    /// context loads. Writing "b" on version 1 is not "no change": it must
    /// conflict, or the client's write is silently lost (found by the
    /// four-process counter test).
    @Test(arguments: ContextFixture.storeKinds)
    func aRebasedWriteOfTheCurrentValueStillChecksItsVersion(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let id = try await container.viewContext.perform { context in
            let tag = try context.insert("Tag")
            try tag.setValue(.string("a"), forKey: "name")
            _ = try await context.save()
            try tag.setValue(.string("b"), forKey: "name")
            _ = try await context.save()
            return tag.objectID
        }
        let replay = container.newBackgroundContext(name: "replay")
        await #expect(throws: StrataError.self) {
            try await replay.perform { context in
                let tag = try await context.existingObject(with: id)
                #expect(tag.persistedVersion == 2)
                try context.rebase(tag, onVersion: 1)
                try tag.setValue(.string("b"), forKey: "name")
                #expect(tag.hasChanges)
                _ = try await context.save()
            }
        }
        // On the current version, an equal value is no change at all.
        try await container.newBackgroundContext().perform { context in
            let tag = try await context.existingObject(with: id)
            try context.rebase(tag, onVersion: 2)
            try tag.setValue(.string("b"), forKey: "name")
            #expect(!tag.hasChanges)
        }
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func overlappingSavesWriteInsertsOnce(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let context = container.viewContext
        try await context.perform { context in
            for i in 0..<20 {
                let tag = try context.insert("Tag")
                try tag.setValue(.string("t\(i)"), forKey: "name")
            }
        }
        async let first: ChangeSet = context.save()
        async let second: ChangeSet = context.save()
        let (a, b) = try await (first, second)
        #expect(a.inserted.count + b.inserted.count == 20)
        #expect(try await context.count(FetchRequest(entityName: "Tag")) == 20)
        let stores = container.coordinator.stores
        let resolved = try container.coordinator.resolver.resolve(FetchRequest(entityName: "Tag"))
        #expect(try await stores[0].count(resolved) == 20)
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func listAdditionsSurviveAMergeOfOtherAdditions(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let (tagID, first, second): (ObjectID, ObjectID, ObjectID) = try await container.viewContext.perform { context in
            let tag = try context.insert("Tag")
            try tag.setValue(.string("sf"), forKey: "name")
            var books: [ManagedObject] = []
            for title in ["One", "Two"] {
                let book = try context.insert("Book")
                try book.setValue(.string(title), forKey: "title")
                books.append(book)
            }
            try await context.save()
            // IDs are permanent only after the save.
            return (tag.objectID, books[0].objectID, books[1].objectID)
        }
        let a = container.newBackgroundContext(name: "A")
        let b = container.newBackgroundContext(name: "B")
        // A adds the first book to the tag (list loaded), B adds the second and saves.
        try await a.perform { a in
            let tag = try await a.existingObject(with: tagID)
            _ = try await a.destinationIDs(of: tag, "books")
            try tag.addDestination(first, forKey: "books")
        }
        let changes = try await b.perform { b in
            let tag = try await b.existingObject(with: tagID)
            _ = try await b.destinationIDs(of: tag, "books")
            try tag.addDestination(second, forKey: "books")
            return try await b.save()
        }
        try await a.merge(changes)
        try await a.perform { a in _ = try await a.save() }
        let check = container.newBackgroundContext()
        let titles: [String] = try await check.perform { check in
            let tag = try await check.existingObject(with: tagID)
            return try await check.destinations(of: tag, "books").map { "\($0["title"])" }.sorted()
        }
        #expect(titles == ["\"One\"", "\"Two\""])
        try await container.close()
    }

    @Test func insertedThenDeletedLeavesNoChanges() async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(.inMemory, in: directory)
        let pending: Bool = try await container.viewContext.perform { context in
            let tag = try context.insert("Tag")
            try tag.setValue(.string("gone"), forKey: "name")
            try await context.delete(tag)
            try await context.save()
            return context.hasChanges || !context.registeredObjects.isEmpty
        }
        #expect(!pending)
        try await container.close()
    }
}
