import Foundation
import StrataModel
import StrataQuery
import Testing
@testable import StrataStore
@testable import StrataSQLite

/// The SQLite store's streaming paths: fetches handed over in batches as
/// they are read, and saves whose inserts come through a feed while the
/// writer already writes.
@Suite struct SQLiteStreamingTests {
    private func open(_ directory: SQLiteTestDirectory) async throws -> SQLiteStore {
        try await SQLiteStore(
            description: StoreDescription(url: directory.storeURL, type: .sqlite, busyTimeout: .seconds(2)),
            model: SQLiteTestModels.library()
        )
    }

    @Test func batchedFetchesHandOverTheSameSnapshotsInOrder() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        // Reviews of books and novels: a to-one whose destination entity is
        // looked up per row, in every batch.
        let size = SQLiteStore.fetchBatchSize
        let titles = (0..<12).map { ObjectID.temporary(entityName: $0 % 3 == 0 ? "Novel" : "Book") }
        var inserts = titles.enumerated().map { StoreChanges.Insert(temporaryID: $1, values: ["title": .string("T\($0)")]) }
        let reviewCount = 2 * size + 301
        for i in 0..<reviewCount {
            inserts.append(.init(temporaryID: .temporary(entityName: "Review"), values: ["stars": .integer(Int64(i % 5)), "book": .object(titles[i % titles.count])]))
        }
        try await store.commit(StoreChanges(inserts: inserts))

        let fetch = try store.resolved("Review", "stars > 0", sort: [StrataQuery.SortDescriptor("stars", ascending: false)])
        let whole = try await store.fetchSnapshots(fetch)
        var batches: [[Snapshot]] = []
        for try await batch in try await store.fetchSnapshotBatches(fetch) { batches.append(batch) }
        #expect(whole.count == reviewCount - (reviewCount + 4) / 5)
        #expect(batches.flatMap { $0 } == whole)
        #expect(batches.dropLast().allSatisfy { $0.count == size })
        #expect((batches.last?.count ?? 0) > 0)
        #expect(batches.count == (whole.count + size - 1) / size)
        // The last batch's destinations were looked up too.
        let destinations = Set((batches.last ?? []).compactMap { snapshot -> String? in
            if case .object(let id) = snapshot["book"] { return id.entityName }
            return nil
        })
        #expect(destinations == ["Book", "Novel"])
        // Tried at once first (unless the reader's time budget, which a
        // busy host may spend, stopped it sooner), the result was found
        // larger than a batch and read again in batches, as above.

        // No limit, and a result within one batch: that one batch (read at
        // once, or by the pool when a busy host spent the reader's budget).
        let fewer = try store.resolved("Review", "stars == 1")
        var fewerBatches: [[Snapshot]] = []
        for try await batch in try await store.fetchSnapshotBatches(fewer) { fewerBatches.append(batch) }
        #expect(fewerBatches.count == 1)
        #expect(fewerBatches.first == (try await store.fetchSnapshots(fewer)))
        #expect(fewerBatches.first?.count == (0..<reviewCount).filter { $0 % 5 == 1 }.count)

        // A limit within one batch: that batch; past it, batches again.
        for limit in [100, size, size + 1] {
            let limited = try store.resolved("Review", "stars > 0", sort: [StrataQuery.SortDescriptor("stars", ascending: false)], limit: limit)
            var counts: [Int] = []
            var rows: [Snapshot] = []
            for try await batch in try await store.fetchSnapshotBatches(limited) {
                counts.append(batch.count)
                rows += batch
            }
            #expect(rows == (try await store.fetchSnapshots(limited)))
            #expect(counts == (limit <= size ? [limit] : [size, limit - size]))
        }

        // No rows: no batch.
        var empty = 0
        for try await _ in try await store.fetchSnapshotBatches(store.resolved("Review", "stars > 10")) { empty += 1 }
        #expect(empty == 0)

        // A caller that stops after one batch leaves the store serving; the
        // store closes with no read left behind.
        for try await batch in try await store.fetchSnapshotBatches(fetch) {
            #expect(batch.count == size)
            break
        }
        #expect(try await store.fetchSnapshots(fetch) == whole)
        try await store.close()
        // A closed store throws before any stream exists.
        do {
            _ = try await store.fetchSnapshotBatches(fetch)
            Issue.record("a closed store gave a stream")
        } catch {
            #expect((error as? StrataError)?.code == .storeOpen)
        }
    }

    @Test func streamedSavesWriteTheFeedOrNothing() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let count = 3 * SQLiteInsertPipeline.chunkRows + 10
        func tags(_ prefix: String) -> [StoreChanges.Insert] {
            (0..<count).map { .init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("\(prefix)\($0)")]) }
        }
        func refusal(_ save: () async throws -> StoreSaveResult) async -> StrataError? {
            do {
                _ = try await save()
                return nil
            } catch {
                return error as? StrataError
            }
        }

        // Supplied in uneven pieces, with pauses: the writer waits for them.
        let inserts = tags("t")
        let feed = StoreInsertFeed(temporaryIDs: inserts.map(\.temporaryID))
        let supplier = Task {
            for start in stride(from: 0, to: count, by: 700) {
                try await Task.sleep(for: .milliseconds(20))
                feed.supply(Array(inserts[start..<min(count, start + 700)]))
            }
        }
        guard case .committed(let commit) = try await store.save(StoreChanges(), streaming: feed) else { Issue.record("no commit"); return }
        try await supplier.value
        #expect(commit.temporaryIDs == inserts.map(\.temporaryID))
        // Each row holds its insert's values.
        let written = Dictionary(uniqueKeysWithValues: try await store.fetch("Tag").map { ($0.objectID, $0["name"]) })
        #expect(written.count == count)
        #expect(zip(commit.insertedIDs, inserts).allSatisfy { written[$0] == $1.values["name"] })
        // A feed serves one save.
        #expect(await refusal { try await store.save(StoreChanges(), streaming: feed) }?.code == .invalidValue)

        // A failed feed fails the save with its error; nothing is written.
        let failing = tags("f")
        let failed = StoreInsertFeed(temporaryIDs: failing.map(\.temporaryID))
        failed.supply(Array(failing.prefix(2 * SQLiteInsertPipeline.chunkRows)))
        let failer = Task {
            try await Task.sleep(for: .milliseconds(50))
            failed.fail(StrataError(.validationMissingMandatoryProperty, "stopped by the test"))
        }
        #expect(await refusal { try await store.save(StoreChanges(), streaming: failed) }?.message.contains("stopped by the test") == true)
        try await failer.value
        #expect(try await store.count(store.resolved("Tag")) == count)

        // A streamed insert naming an object (to-one or to-many) is
        // refused, naming it: nothing is written.
        let target = try #require(commit.insertedIDs.first)
        for (name, value) in [("shelf", PropertyValue.object(target)), ("tags", .objects([target]))] {
            var books = (0..<count).map { StoreChanges.Insert(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("b\($0)")]) }
            books[count - 1].values[name] = value
            let booksFeed = StoreInsertFeed(temporaryIDs: books.map(\.temporaryID))
            booksFeed.supply(books)
            let error = await refusal { try await store.save(StoreChanges(), streaming: booksFeed) }
            #expect(error?.code == .invalidValue)
            #expect(error?.message.contains("sets \(name)") == true)
            #expect(try await store.count(store.resolved("Book")) == 0)
        }

        // Inserts belong in the feed, not in the change set.
        let stray = StoreChanges.Insert(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("x")])
        #expect(await refusal { try await store.save(StoreChanges(inserts: [stray]), streaming: StoreInsertFeed(temporaryIDs: [])) }?.code == .invalidValue)
        // A piece out of order, or past the end, fails the feed.
        let shuffled = tags("s")
        let outOfOrder = StoreInsertFeed(temporaryIDs: shuffled.map(\.temporaryID))
        #expect(!outOfOrder.supply([shuffled[1], shuffled[0]]))
        #expect(await refusal { try await store.save(StoreChanges(), streaming: outOfOrder) }?.code == .invalidValue)
        let overfull = StoreInsertFeed(temporaryIDs: Array(shuffled.prefix(2).map(\.temporaryID)))
        #expect(!overfull.supply(Array(shuffled.prefix(3))))
        #expect(await refusal { try await store.save(StoreChanges(), streaming: overfull) }?.code == .invalidValue)
        // A supplier that stops supplying frees the writer after the feed's
        // stall limit: 134090, nothing written.
        let stalled = StoreInsertFeed(temporaryIDs: shuffled.map(\.temporaryID), stallLimit: .milliseconds(300))
        stalled.supply(Array(shuffled.prefix(SQLiteInsertPipeline.chunkRows + 5)))
        #expect(await refusal { try await store.save(StoreChanges(), streaming: stalled) }?.code == .storeTimeout)
        #expect(try await store.count(store.resolved("Tag")) == count)
        // The store goes on saving.
        try await store.commit(StoreChanges(inserts: [stray]))
        #expect(try await store.count(store.resolved("Tag")) == count + 1)
    }
}
