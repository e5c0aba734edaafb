import Foundation
import Testing
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataSQLite

/// Where a save's optimistic-locking check happens: a save to one store
/// leaves it to that store's save (atomic, and answered with the current
/// snapshots), so the objects it updates are not read again first; a save
/// to several stores checks every store before writing to any.
@Suite struct VersionCheckTests {
    @Test("A save to one store reads its updated objects no second time; a save to two checks first; a stale save still conflicts")
    func versionsAreCheckedOnceWhereTheSaveIsAtomic() async throws {
        let directory = TemporaryDirectory()
        let model = BooksSample.model
        let opened = try await StoreFactory.standard.open(StoreDescription(url: directory.url.appendingPathComponent("Books.sqlite"), type: .sqlite, configuration: "Book"),
                                                          model: model, transformers: BooksSample.transformers)
        let books = StreamCountingStore(try #require(opened as? SQLiteStore))
        let feedbackStore = try await InMemoryStore(description: StoreDescription(url: nil, type: .inMemory, configuration: "Feedback"), model: model)
        let coordinator = try Coordinator(model: model, stores: [books, feedbackStore], transformers: BooksSample.transformers, transientRules: BooksSample.transientRules)

        let writer = Context(coordinator: coordinator, name: "writer")
        let (bookID, feedbackID) = try await writer.perform { context -> (ObjectID, ObjectID) in
            let book = try context.insert("Book")
            try book.setValue(.uuid(UUID()), forKey: "uuid")
            try book.setValue(.string("First"), forKey: "title")
            let feedback = try context.insert("Feedback")
            try feedback.setValue(.uuid(UUID()), forKey: "bookUUID")
            try feedback.setValue(.integer(3), forKey: "rating")
            try await context.save()
            return (book.objectID, feedback.objectID)
        }
        // Read at version 1 before anyone changes it.
        let stale = Context(coordinator: coordinator, name: "stale")
        try await stale.perform { context in _ = try await context.existingObject(with: bookID) }

        let editor = Context(coordinator: coordinator, name: "editor")
        try await editor.perform { context in
            try await context.existingObject(with: bookID).setValue(.string("Second"), forKey: "title")
        }
        let loaded = await books.snapshotReads
        _ = try await editor.perform { try await $0.save() }
        #expect(await books.snapshotReads == loaded, "one store: its save checks the version")

        try await editor.perform { context in
            try await context.existingObject(with: bookID).setValue(.string("Third"), forKey: "title")
            try await context.existingObject(with: feedbackID).setValue(.integer(5), forKey: "rating")
        }
        let loadedAgain = await books.snapshotReads
        _ = try await editor.perform { try await $0.save() }
        #expect(await books.snapshotReads == loadedAgain + 1, "two stores: each is checked before either is written")

        // The store's own check refuses a save based on version 1, and
        // names the object with its current version and values.
        let refusal = await stale.perform { context -> StrataError? in
            do {
                try await context.existingObject(with: bookID).setValue(.string("Lost"), forKey: "title")
                try await context.save()
                return nil
            } catch {
                return error as? StrataError
            }
        }
        #expect(refusal?.code == .mergeConflict)
        #expect(refusal?.conflicts.map(\.objectID) == [bookID])
        #expect(refusal?.conflicts.first?.expectedVersion == 1)
        #expect(refusal?.conflicts.first?.currentVersion == 3)
        #expect(refusal?.conflicts.first?.persistedValues?["title"] == .string("Third"))
        let title = try await Context(coordinator: coordinator, name: "reader").perform { context in
            try await context.existingObject(with: bookID).value(forKey: "title")
        }
        #expect(title == .string("Third"))
    }
}
