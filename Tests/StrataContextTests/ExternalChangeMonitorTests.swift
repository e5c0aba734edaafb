import Foundation
import GRDB
import NIOConcurrencyHelpers
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataSQLite
import Testing

/// Two containers on the same SQLite files (what two processes see: two
/// store instances, two connections): saves through one reach the other
/// through persistent history, as change sets its contexts merge.
@Suite struct ExternalChangeMonitorTests {
    private func container(_ directory: TemporaryDirectory, rowCache: Int = 0) async throws -> PersistentContainer {
        try await PersistentContainer(
            model: BooksSample.model,
            storeDescriptions: BooksSample.sqliteStores(in: directory.url), factory: .standard,
            transformers: BooksSample.transformers,
            transientRules: BooksSample.transientRules,
            rowCacheCapacity: rowCache
        )
    }

    /// The change sets on `stream` up to the first that satisfies `test`
    /// (included), within 10 s.
    private func collect(_ stream: AsyncStream<ChangeSet>, until test: @escaping @Sendable (ChangeSet) -> Bool) async throws -> [ChangeSet] {
        try await withThrowingTaskGroup(of: [ChangeSet]?.self) { group in
            group.addTask {
                var seen: [ChangeSet] = []
                for await changes in stream {
                    seen.append(changes)
                    if test(changes) { return seen }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                return nil
            }
            let found = try await group.next() ?? nil
            group.cancelAll()
            return try #require(found, "no matching change set within 10 s")
        }
    }

    /// The next change set on `stream` that satisfies `test`, within 10 s.
    private func next(_ stream: AsyncStream<ChangeSet>, where test: @escaping @Sendable (ChangeSet) -> Bool) async throws -> ChangeSet {
        let seen = try await collect(stream, until: test)
        return try #require(seen.last)
    }

    @Test func savesInOneContainerAreMergedByTheOther() async throws {
        let directory = TemporaryDirectory()
        let writer = try await container(directory)
        let reader = try await container(directory, rowCache: 100)
        // Started from the stores' newest tokens: nothing after this line is missed.
        let monitor = await ExternalChangeMonitor.start(coordinator: reader.coordinator, options: .init(pollInterval: .milliseconds(5), consumerName: "reader"))
        let heard = reader.coordinator.changes.subscribe()
        let watching = reader.newBackgroundContext(name: "watching")
        await watching.automaticallyMergeChanges()

        // An insert, with its author, arrives as an inserted ID.
        let writing = writer.newBackgroundContext(name: "writer")
        await writing.setTransactionAuthor("import-job")
        let (bookID, bookUUID) = try await writing.perform { context in
            let book = try context.insert("Book")
            let uuid = UUID()
            try book.setValue(.uuid(uuid), forKey: "uuid")
            try book.setValue(.string("Dune"), forKey: "title")
            _ = try await context.save()
            return (book.objectID, uuid)
        }
        let inserted = try await next(heard) { $0.inserted.contains(bookID) }
        #expect(inserted.contextName == "writer")
        #expect(inserted.versions[bookID] == 1)

        // The reader caches the row and shows it in a context with a fetched property.
        let before = try await watching.perform { context in
            let book = try await context.existingObject(with: bookID)
            let feedback = try await context.fetchedProperty("feedbackList", of: book).count
            return (book["title"], feedback)
        }
        #expect(before.0 == .string("Dune"))
        #expect(before.1 == 0)

        // An update and a feedback in the other store.
        try await writing.perform { context in
            let book = try await context.existingObject(with: bookID)
            try book.setValue(.string("Dune Messiah"), forKey: "title")
            let feedback = try context.insert("Feedback")
            try feedback.setValue(.uuid(bookUUID), forKey: "bookUUID")
            try feedback.setValue(.integer(5), forKey: "rating")
            _ = try await context.save()
        }
        // The two stores are watched apart: their change sets come in either order.
        let isFeedback: @Sendable (ChangeSet) -> Bool = { $0.inserted.contains { $0.entityName == "Feedback" } }
        var seen = try await collect(heard) { $0.updated[bookID]?.contains("title") == true }
        #expect(seen.last?.versions[bookID] == 2)
        if !seen.contains(where: isFeedback) { seen += [try await next(heard, where: isFeedback)] }
        // Give the merging context its turn after the hub delivered.
        try await Task.sleep(for: .milliseconds(100))

        let after = try await watching.perform { context in
            let book = try await context.existingObject(with: bookID)
            let feedback = try await context.fetchedProperty("feedbackList", of: book).count
            return (book["title"], book.persistedVersion, feedback)
        }
        #expect(after.0 == .string("Dune Messiah"))
        #expect(after.1 == 2)
        #expect(after.2 == 1)
        // A fresh context reads the new row, not the cached one.
        let fresh = try await reader.newBackgroundContext().perform { try await $0.existingObject(with: bookID)["title"] }
        #expect(fresh == .string("Dune Messiah"))

        // A deletion.
        try await writing.perform { context in
            try await context.delete(try await context.existingObject(with: bookID))
            _ = try await context.save()
        }
        _ = try await next(heard) { $0.deleted.contains(bookID) }
        // The merging context drops the deleted object.
        let stillThere = try await waitUntil {
            await watching.perform { context in !context.registeredObjects.contains { $0.objectID == bookID } }
        }
        #expect(stillThere, "the deleted book is still registered in the merging context")

        // The reader's own saves never come back to it through history.
        let own = try await reader.newBackgroundContext(name: "own").perform { context in
            let book = try context.insert("Book")
            try book.setValue(.uuid(UUID()), forKey: "uuid")
            try book.setValue(.string("Own"), forKey: "title")
            _ = try await context.save()
            return book.objectID
        }
        let marker = try await writing.perform { context in
            let book = try context.insert("Book")
            try book.setValue(.uuid(UUID()), forKey: "uuid")
            try book.setValue(.string("Marker"), forKey: "title")
            _ = try await context.save()
            return book.objectID
        }
        seen = try await collect(heard) { $0.inserted.contains(marker) }
        #expect(!seen.contains { $0.origin.hasPrefix("history:") && $0.inserted.contains(own) }, "the reader's own insert came back through history")
        #expect(seen.contains { !$0.origin.hasPrefix("history:") && $0.inserted.contains(own) })

        // The reader recorded how far it has merged.
        try await Task.sleep(for: .milliseconds(1200))
        try await writing.perform { context in
            let book = try context.insert("Book")
            try book.setValue(.uuid(UUID()), forKey: "uuid")
            try book.setValue(.string("Last"), forKey: "title")
            _ = try await context.save()
        }
        _ = try await next(heard) { $0.inserted.contains { $0.entityName == "Book" } }
        await monitor.stop()
        let books = try #require(reader.coordinator.stores.first { $0.configurationName == "Book" } as? any HistoryTrackingStore)
        let consumers = try await books.consumers()
        #expect(consumers.map(\.name) == ["reader"])
        #expect((consumers.first?.token.value ?? 0) >= 1)
        try await writer.close()
        try await reader.close()
    }

    /// Polls `condition` every 10 ms for up to 10 s; whether it held.
    private func waitUntil(_ condition: @Sendable () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test func theMonitorPurgesOnItsScheduleWhatItsConsumerMerged() async throws {
        let directory = TemporaryDirectory()
        let writer = try await container(directory)
        let reader = try await container(directory)
        let books = try #require(writer.coordinator.stores.first { $0.configurationName == "Book" } as? any HistoryTrackingStore)
        let monitor = await ExternalChangeMonitor.start(coordinator: reader.coordinator, options: .init(
            pollInterval: .milliseconds(5), consumerName: "reader", consumerInterval: .zero,
            purgeInterval: .milliseconds(50), retention: .seconds(3600)))
        let heard = reader.coordinator.changes.subscribe()
        let writing = writer.newBackgroundContext(name: "writer")
        var last: ObjectID?
        for i in 0..<3 {
            last = try await writing.perform { context in
                let book = try context.insert("Book")
                try book.setValue(.uuid(UUID()), forKey: "uuid")
                try book.setValue(.string("Book \(i)"), forKey: "title")
                _ = try await context.save()
                return book.objectID
            }
        }
        let lastID = try #require(last)
        _ = try await next(heard) { $0.inserted.contains(lastID) }
        // No call to purgeHistory: the monitor's timer purges up to the
        // token its consumer recorded, and older tokens then fail with 134301.
        let purged = try await waitUntil {
            do {
                _ = try await books.history(after: HistoryToken(storeIdentifier: books.identifier, value: 1), limit: 10)
                return false
            } catch let error as StrataError where error.code == .historyTokenExpired {
                return true
            }
        }
        #expect(purged, "history merged by the only consumer was not purged on schedule")
        await monitor.stop()
        try await writer.close()
        try await reader.close()
    }

    @Test func anUnreadableHistoryRowDoesNotStopNotificationsForGood() async throws {
        let directory = TemporaryDirectory()
        let writer = try await container(directory)
        let reader = try await container(directory)
        let errors = NIOLockedValueBox<[String]>([])
        let monitor = await ExternalChangeMonitor.start(coordinator: reader.coordinator, options: .init(
            pollInterval: .milliseconds(5), onError: { _, error in errors.withLockedValue { $0.append("\(error)") } }))
        let heard = reader.coordinator.changes.subscribe()
        let writing = writer.newBackgroundContext(name: "writer")
        let insert: @Sendable (String) async throws -> ObjectID = { title in
            try await writing.perform { context in
                let book = try context.insert("Book")
                try book.setValue(.uuid(UUID()), forKey: "uuid")
                try book.setValue(.string(title), forKey: "title")
                _ = try await context.save()
                return book.objectID
            }
        }
        let first = try await insert("Before")
        _ = try await next(heard) { $0.inserted.contains(first) }

        // A transaction whose change has a type this version cannot read
        // (a newer writer, a damaged file): reading past it fails.
        let file = try DatabaseQueue(path: directory.url.appendingPathComponent("Books.sqlite").path)
        try await file.write { db in
            try db.execute(sql: "INSERT INTO Z_STRATA_HISTORY (Z_TIMESTAMP, Z_AUTHOR, Z_CONTEXT, Z_PROCESS, Z_ORIGIN) VALUES (0, 'future', NULL, 1, 'elsewhere')")
            try db.execute(sql: "INSERT INTO Z_STRATA_HISTORY_CHANGE (Z_TOKEN, Z_SEQ, Z_TYPE, Z_ENTITY, Z_KEY, Z_VERSION, Z_PROPERTIES) VALUES (?, 1, 9, 'Book', 1, 1, '')", arguments: [db.lastInsertedRowID])
        }
        try file.close()
        // After three failures in a row the monitor goes on from the newest
        // transaction and says so; later saves are announced again.
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        while !errors.withLockedValue({ $0.contains { $0.contains("times in a row") } }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(errors.withLockedValue { $0.contains { $0.contains("unknown type 9") } })
        #expect(errors.withLockedValue { $0.contains { $0.contains("times in a row") } }, "the monitor never skipped the unreadable transaction")
        // Saves made before it starts again (it pauses after a failure) are
        // not announced; keep saving until one made after is.
        let saving = Task {
            for i in 0..<50 where !Task.isCancelled {
                _ = try await insert("Later \(i)")
                try await Task.sleep(for: .milliseconds(300))
            }
        }
        _ = try await next(heard) { changes in
            changes.origin.hasPrefix("history:") && changes.inserted.contains { $0.entityName == "Book" && $0 != first }
        }
        saving.cancel()
        _ = await saving.result
        await monitor.stop()
        try await writer.close()
        try await reader.close()
    }

    @Test func aTransactionBecomesTheChangeSetOfItsChanges() {
        let store = "S"
        let a = ObjectID(storeIdentifier: store, entityName: "Book", key: .permanent(1))
        let b = ObjectID(storeIdentifier: store, entityName: "Book", key: .permanent(2))
        let c = ObjectID(storeIdentifier: store, entityName: "Feedback", key: .permanent(3))
        let transaction = HistoryTransaction(
            token: HistoryToken(storeIdentifier: store, value: 9), timestamp: Date(), author: "job", contextName: nil,
            processID: 42, origin: "O", changes: [
                HistoryChange(kind: .insert, objectID: a, version: 1, changedProperties: ["title"]),
                HistoryChange(kind: .update, objectID: b, version: 4, changedProperties: ["pages", "title"]),
                HistoryChange(kind: .delete, objectID: c, version: 0),
            ])
        let changes = ExternalChangeMonitor.changeSet(of: transaction)
        #expect(changes.inserted == [a])
        #expect(changes.updated == [b: ["pages", "title"]])
        #expect(changes.deleted == [c])
        #expect(changes.versions == [a: 1, b: 4])
        #expect(changes.contextName == "job")
        #expect(changes.origin == "history:O")
    }
}
