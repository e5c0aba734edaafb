import Foundation
import StrataModel
import StrataPostgresTesting
import StrataQuery
import Testing
@testable import StrataStore
@testable import StrataSQLite
@testable import StrataPostgres

/// The persistent-history contract (``HistoryTrackingStore``) on every
/// store that records history: SQLite, and PostgreSQL where a server is
/// configured (``StoreKind/allCases``). Two instances opened on one
/// store stand for two processes (SQLite) or two servers (PostgreSQL).
@Suite struct StoreHistoryTests {
    static let model = SQLiteHistoryTests.model
    static let kinds = StoreKind.allCases.filter { $0 == .sqlite || $0 == .postgres }

    /// A store of `kind` named after `directory`, recording history.
    private func open(_ kind: StoreKind, _ directory: SQLiteTestDirectory) async throws -> any HistoryTrackingStore {
        let description = kind == .sqlite
            ? StoreDescription(url: directory.storeURL, type: .sqlite, busyTimeout: .seconds(2))
            : kind.description(in: directory.url)
        if kind == .postgres { await PostgresTestServer.dropAbandonedSchemasOnce("st") }
        let store = try await StoreFixture.factory.open(description, model: Self.model)
        return try #require(store as? any HistoryTrackingStore)
    }

    /// The reader's change watcher with pages of `pageSize`.
    private func watcher(of reader: any HistoryTrackingStore, in directory: SQLiteTestDirectory, pageSize: Int) -> (Int64?) -> AsyncThrowingStream<HistoryUpdate, any Error> {
        if let postgres = reader as? PostgresStore {
            var watcher = PostgresChangeWatcher(configuration: postgres.watcherConfiguration, storeIdentifier: postgres.identifier, origin: postgres.historyOrigin,
                                                model: Self.model, place: postgres.place, logger: postgres.logger)
            watcher.pageSize = pageSize
            return { watcher.updates(after: $0) }
        }
        let watcher = SQLiteChangeWatcher(path: directory.storeURL.path, storeIdentifier: reader.identifier, origin: reader.historyOrigin, model: Self.model, busyTimeout: .seconds(2), pageSize: pageSize)
        return { watcher.updates(after: $0, pollInterval: .milliseconds(5)) }
    }

    @Test(arguments: Self.kinds)
    func everyCommittedSaveRecordsOneTransaction(_ kind: StoreKind) async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(kind, directory)
        #expect(try await store.currentHistoryToken().value == 0)

        let author = ObjectID.temporary(entityName: "Author")
        let book = ObjectID.temporary(entityName: "Book")
        let first = try await store.commit(StoreChanges(inserts: [
            .init(temporaryID: author, values: ["name": .string("Ursula")], toMany: ["books": [book]]),
            .init(temporaryID: book, values: ["title": .string("Earthsea"), "serial": .string("S-1"), "author": .object(author)]),
        ], author: "importer", contextName: "background"))
        let bookID = try #require(first.permanentIDs[book])
        let authorID = try #require(first.permanentIDs[author])

        let all = try await store.history(after: nil, limit: 100)
        #expect(all.count == 1)
        let transaction = try #require(all.first)
        #expect(transaction.token.value == 1)
        #expect(transaction.token.storeIdentifier == store.identifier)
        #expect(transaction.author == "importer")
        #expect(transaction.contextName == "background")
        #expect(transaction.processID == ProcessInfo.processInfo.processIdentifier)
        #expect(transaction.origin == store.historyOrigin)
        #expect(abs(transaction.timestamp.timeIntervalSinceNow) < 60)
        #expect(transaction.changes == [
            HistoryChange(kind: .insert, objectID: authorID, version: 1, changedProperties: ["books", "name"]),
            HistoryChange(kind: .insert, objectID: bookID, version: 1, changedProperties: ["author", "serial", "title"]),
        ])

        _ = try await store.commit(StoreChanges(updates: [.init(objectID: bookID, expectedVersion: 1, values: ["title": .string("A Wizard of Earthsea")])]))
        // A conflicting save writes nothing, history included.
        let stale = try await store.save(StoreChanges(updates: [.init(objectID: bookID, expectedVersion: 1, values: ["title": .string("stale")])]))
        guard case .conflicts = stale else {
            Issue.record("expected a conflict, got \(stale)")
            return
        }
        _ = try await store.commit(StoreChanges(deletes: [.init(objectID: bookID, expectedVersion: 2)]))

        let later = try await store.history(after: transaction.token, limit: 100)
        #expect(later.map(\.token.value) == [2, 3])
        #expect(later[0].changes == [HistoryChange(kind: .update, objectID: bookID, version: 2, changedProperties: ["title"])])
        #expect(later[1].changes == [HistoryChange(kind: .delete, objectID: bookID, version: 0, tombstone: ["serial": .string("S-1")])])
        #expect(try await store.history(after: later[0].token, limit: 100).map(\.token.value) == [3])
        #expect(try await store.history(after: nil, limit: 2).map(\.token.value) == [1, 2])
        #expect(try await store.currentHistoryToken().value == 3)
        try await store.close()
    }

    @Test(arguments: Self.kinds)
    func groupedSavesRecordOneTransactionEach(_ kind: StoreKind) async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(kind, directory)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<40 {
                group.addTask {
                    _ = try await store.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("t\(i)")])], author: "w\(i)"))
                }
            }
            try await group.waitForAll()
        }
        let history = try await store.history(after: nil, limit: 1000)
        #expect(history.count == 40)
        #expect(history.map(\.token.value) == Array(1...40))
        #expect(Set(history.compactMap(\.author)).count == 40)
        #expect(history.allSatisfy { $0.changes.count == 1 && $0.changes[0].kind == .insert })
        try await store.close()
    }

    @Test(arguments: Self.kinds)
    func purgeKeepsWhatLiveConsumersNeedAndExpiresOlderTokens(_ kind: StoreKind) async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(kind, directory)
        for i in 0..<5 {
            _ = try await store.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("t\(i)")])]))
        }
        let token = { (value: Int64) in HistoryToken(storeIdentifier: store.identifier, value: value) }
        try await store.recordConsumer("a", token: token(2))
        try await store.recordConsumer("b", token: token(4))
        try await store.recordConsumer("b", token: token(3))   // never backwards
        #expect(try await store.consumers().map(\.name) == ["a", "b"])
        #expect(try await store.consumers().map(\.token.value) == [2, 4])

        let purge = try await store.purgeHistory(maximumAge: .seconds(3600))
        #expect(purge.transactions == 2)
        #expect(purge.purgedThrough == token(2))
        #expect(try await store.history(after: token(2), limit: 10).map(\.token.value) == [3, 4, 5])
        #expect(try await store.history(after: nil, limit: 10).map(\.token.value) == [3, 4, 5])
        await expectError(.historyTokenExpired) { _ = try await store.history(after: token(1), limit: 10) }
        await expectError(.invalidValue) { _ = try await store.history(after: HistoryToken(storeIdentifier: "other", value: 3), limit: 10) }

        // Consumers silent for longer than the retention no longer hold
        // history back; tokens are never reused after a purge.
        try await Task.sleep(for: .milliseconds(20))
        let all = try await store.purgeHistory(maximumAge: .milliseconds(10))
        #expect(all.purgedThrough == token(5))
        #expect(try await store.history(after: token(5), limit: 10).isEmpty)
        _ = try await store.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("after")])]))
        #expect(try await store.history(after: token(5), limit: 10).map(\.token.value) == [6])
        try await store.close()
    }

    @Test(arguments: Self.kinds)
    func anotherInstanceSeesCommitsButNotItsOwn(_ kind: StoreKind) async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let writer = try await open(kind, directory)
        let reader = try await open(kind, directory)
        #expect(writer.historyOrigin != reader.historyOrigin)

        // From the current token: no window in which a commit is missed.
        let start = try await reader.currentHistoryToken()
        var updates = reader.externalChanges(after: start, pollInterval: .milliseconds(5)).makeAsyncIterator()
        _ = try await reader.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("own")])]))
        let commit = try await writer.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("theirs")])], author: "writer"))
        let theirs = try #require(commit.permanentIDs.values.first)

        var seen: [HistoryTransaction] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while seen.isEmpty, ContinuousClock.now < deadline {
            guard let update = try await updates.next() else { break }
            #expect(update.token.value >= 1)
            seen += update.transactions
        }
        #expect(seen.count == 1)
        #expect(seen.first?.author == "writer")
        #expect(seen.first?.changes.map(\.objectID) == [theirs])
        #expect(seen.first?.origin == writer.historyOrigin)
        try await writer.close()
        try await reader.close()
    }

    @Test(arguments: Self.kinds)
    func tokensNewerThanTheStoreAreRefusedAndPurgeStopsAtTheNewest(_ kind: StoreKind) async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(kind, directory)
        for i in 0..<3 {
            _ = try await store.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("t\(i)")])]))
        }
        let token = { (value: Int64) in HistoryToken(storeIdentifier: store.identifier, value: value) }
        // A token the store never handed out: refused, nothing recorded.
        await expectError(.invalidValue) { _ = try await store.history(after: token(4), limit: 10) }
        await expectError(.invalidValue) { try await store.recordConsumer("future", token: token(1_000_000)) }
        #expect(try await store.consumers().isEmpty)
        #expect(try await store.history(after: token(3), limit: 10).isEmpty)

        // The only live consumer has merged everything: the purge goes up to
        // the newest token and no further, so the next commit is readable.
        try await store.recordConsumer("only", token: token(3))
        let purge = try await store.purgeHistory(maximumAge: .seconds(3600))
        #expect(purge.purgedThrough == token(3))
        _ = try await store.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("next")])]))
        #expect(try await store.history(after: token(3), limit: 10).map(\.token.value) == [4])
        try await store.close()
    }

    @Test(arguments: Self.kinds)
    func aWatcherResumesAfterATokenAndReadsABacklogInPages(_ kind: StoreKind) async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let writer = try await open(kind, directory)
        let reader = try await open(kind, directory)
        _ = try await writer.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("seen")])]))
        let resumeFrom = try await reader.currentHistoryToken()
        // Committed while nobody watched: 7 of theirs, 1 of the reader's own.
        for i in 0..<7 {
            _ = try await writer.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("w\(i)")])], author: "w\(i)"))
            if i == 3 {
                _ = try await reader.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("own")])]))
            }
        }
        var updates = watcher(of: reader, in: directory, pageSize: 3)(resumeFrom.value).makeAsyncIterator()
        var authors: [String] = []
        var tokens: [Int64] = []
        while authors.count < 7 {
            guard let update = try await updates.next() else { break }
            #expect(update.transactions.count <= 3)
            authors += update.transactions.compactMap(\.author)
            tokens.append(update.token.value)
        }
        #expect(authors == (0..<7).map { "w\($0)" })
        #expect(tokens == tokens.sorted())
        #expect(tokens.last == 9)
        // And on from there, as commits arrive.
        _ = try await writer.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("later")])], author: "later"))
        let next = try await updates.next()
        #expect(next?.transactions.map(\.author) == ["later"])
        #expect(next?.token.value == 10)

        // A token from the future (history reset, another file's token)
        // ends the stream with invalidValue rather than waiting silently.
        var future = reader.externalChanges(after: HistoryToken(storeIdentifier: reader.identifier, value: 1_000), pollInterval: .milliseconds(5)).makeAsyncIterator()
        await expectError(.invalidValue) { _ = try await future.next() }

        // A purged resume point ends the stream with 134301.
        try await writer.recordConsumer("all", token: HistoryToken(storeIdentifier: writer.identifier, value: 10))
        _ = try await writer.purgeHistory(maximumAge: .seconds(3600))
        var expired = reader.externalChanges(after: resumeFrom, pollInterval: .milliseconds(5)).makeAsyncIterator()
        await expectError(.historyTokenExpired) { _ = try await expired.next() }
        try await writer.close()
        try await reader.close()
    }

    @Test(arguments: Self.kinds)
    func concurrentSavesThatFailLeaveTheOthersAndTheirHistoryWhole(_ kind: StoreKind) async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(kind, directory)
        let saved = try await store.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("base")])]))
        let base = try #require(saved.insertedIDs.first)
        let ghost = ObjectID(storeIdentifier: store.identifier, entityName: "Author", key: .permanent(999_999))
        // Saved together (one group commit where the store has them): good
        // inserts, inserts pointing to an object that does not exist
        // (133000), and stale updates (conflicts).
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<30 {
                group.addTask {
                    switch i % 3 {
                    case 0:
                        _ = try await store.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("good\(i)")])], author: "good"))
                        return "committed"
                    case 1:
                        do {
                            _ = try await store.save(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("b\(i)"), "author": .object(ghost)])]))
                            return "accepted a dangling reference"
                        } catch let error as StrataError where error.code == .objectNotFound {
                            return "refused"
                        }
                    default:
                        let result = try await store.save(StoreChanges(updates: [.init(objectID: base, expectedVersion: 7, values: ["name": .string("stale\(i)")])]))
                        if case .conflicts = result { return "conflict" }
                        return "accepted a stale update"
                    }
                }
            }
            var outcomes: [String: Int] = [:]
            for try await outcome in group { outcomes[outcome, default: 0] += 1 }
            return outcomes
        }
        #expect(outcomes == ["committed": 10, "refused": 10, "conflict": 10])
        #expect(try await store.count(StoreFixtureFetch.all("Tag", model: Self.model)) == 11)
        #expect(try await store.count(StoreFixtureFetch.all("Book", model: Self.model)) == 0)
        let history = try await store.history(after: nil, limit: 100)
        #expect(history.count == 11)
        #expect(history.map(\.token.value) == Array(1...11))
        #expect(history.dropFirst().allSatisfy { $0.author == "good" && $0.changes.count == 1 })
        try await store.close()
    }

    /// A watcher passes its own instance's commits over (SQLite reads
    /// none of them back), yet never another's committed between them.
    @Test(arguments: Self.kinds)
    func anotherInstancesCommitsBetweenOwnOnesAreAllSeen(_ kind: StoreKind) async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let other = try await open(kind, directory)
        let watched = try await open(kind, directory)
        let start = try await watched.currentHistoryToken()
        var updates = watched.externalChanges(after: start, pollInterval: .milliseconds(2)).makeAsyncIterator()
        let tag = { (name: String) in StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string(name)])], author: name) }
        // Own commits in runs, the other instance's between them and at
        // the end, with pauses that let the watcher poll in between.
        var theirs: [String] = []
        for round in 0..<4 {
            for own in 0..<3 {
                _ = try await watched.commit(tag("own\(round)-\(own)"))
                try await Task.sleep(for: .milliseconds(3))
            }
            _ = try await other.commit(tag("theirs\(round)"))
            theirs.append("theirs\(round)")
        }
        let newest = try await watched.currentHistoryToken().value

        var seen: [String] = []
        var token: Int64 = 0
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while token < newest, ContinuousClock.now < deadline {
            guard let update = try await updates.next() else { break }
            seen += update.transactions.compactMap(\.author)
            token = update.token.value
        }
        #expect(seen == theirs)
        #expect(token == newest)
        try await other.close()
        try await watched.close()
    }
}

/// Fetches of the history model.
enum StoreFixtureFetch {
    /// Every object of `entity`.
    static func all(_ entity: String, model: ObjectModel) throws -> ResolvedFetch {
        try PredicateResolver(model: model).resolve(FetchRequest(entityName: entity), variables: [:], source: nil)
    }
}
