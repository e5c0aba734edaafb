import Foundation
import GRDB
import StrataModel
import StrataQuery
import Testing
@testable import StrataStore
@testable import StrataSQLite

/// Persistent history, change detection between store instances and the
/// busy retry of the SQLite store.
@Suite struct SQLiteHistoryTests {
    typealias Models = SQLiteTestModels

    /// The library model with a Book attribute preserved after deletion.
    static let model = Models.library(bookAttributes: [
        AttributeDescription(name: "serial", type: .string, isOptional: true, preserveAfterDeletion: true),
    ])

    private func open(_ url: URL, tracksHistory: Bool = true, busyTimeout: Duration = .seconds(2), readOnly: Bool = false) async throws -> SQLiteStore {
        try await SQLiteStore(
            description: StoreDescription(url: url, type: .sqlite, isReadOnly: readOnly, busyTimeout: busyTimeout, tracksHistory: tracksHistory),
            model: Self.model
        )
    }

    @Test func historyCanBeTurnedOffOnlyForAFileWithoutIt() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let plain = try await open(directory.storeURL, tracksHistory: false)
        #expect(!plain.recordsHistory)
        _ = try await plain.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("t")])]))
        #expect(try await plain.history(after: nil, limit: 10).isEmpty)
        await expectError(.storeSave) { try await plain.recordConsumer("a", token: HistoryToken(storeIdentifier: plain.identifier, value: 0)) }
        try await plain.close()

        let tracking = try await open(directory.storeURL)
        #expect(tracking.recordsHistory)
        try await tracking.close()
        // Once the file has history, an opener that does not ask still records.
        let again = try await open(directory.storeURL, tracksHistory: false)
        #expect(again.recordsHistory)
        _ = try await again.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("u")])]))
        #expect(try await again.history(after: nil, limit: 10).count == 1)
        try await again.close()
    }

    @Test func savesWaitForAnotherConnectionsLockAndTimeOutWith134090() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory.storeURL, busyTimeout: .seconds(5))
        let other = try DatabaseQueue(path: directory.storeURL.path)
        let tag = { StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("t")])]) }

        // Held for a while, then released: the save waits and commits.
        let holder = await other.holdWriteLock(seconds: 0.3)
        _ = try await store.commit(tag())
        try await holder.value
        try await store.close()

        // Held past the deadline (until the save has answered, however
        // late a loaded machine runs it): 134090, nothing written.
        let impatient = try await open(directory.storeURL, busyTimeout: .milliseconds(100))
        let before = try await impatient.currentHistoryToken()
        let release = DispatchSemaphore(value: 0)
        let longHolder = await other.holdWriteLock(seconds: 0, release: release)
        await expectError(.storeTimeout) { _ = try await impatient.save(tag()) }
        release.signal()
        try await longHolder.value
        #expect(try await impatient.currentHistoryToken() == before)
        try await impatient.close()
        try other.close()
    }

    @Test func thePollBacksOffWhileNothingArrivesAndReturnsToItsBaseOnAnotherInstancesCommit() {
        let base = Duration.milliseconds(10)
        var interval = base
        var seen: [Duration] = []
        for _ in 0..<6 {
            interval = SQLiteChangeWatcher.nextInterval(after: interval, base: base, foundOthers: false)
            seen.append(interval)
        }
        #expect(seen == [20, 40, 80, 100, 100, 100].map { Duration.milliseconds($0) })
        #expect(SQLiteChangeWatcher.nextInterval(after: interval, base: base, foundOthers: true) == base)
        // A base longer than the longest idle interval is kept as it is.
        #expect(SQLiteChangeWatcher.nextInterval(after: .milliseconds(250), base: .milliseconds(250), foundOthers: false) == .milliseconds(250))
        // Never shorter than the base, and never past the longest.
        #expect(SQLiteChangeWatcher.nextInterval(after: .milliseconds(70), base: .milliseconds(70), foundOthers: false) == .milliseconds(100))
        #expect(SQLiteChangeWatcher.nextInterval(after: .milliseconds(1), base: .milliseconds(3), foundOthers: false) == .milliseconds(3))
    }

    @Test func aCommitAfterAQuietSpellIsStillAnnouncedAndTheNextOneToo() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let writer = try await open(directory.storeURL)
        let reader = try await open(directory.storeURL)
        let start = try await reader.currentHistoryToken()
        var updates = reader.externalChanges(after: start, pollInterval: .milliseconds(5)).makeAsyncIterator()
        // Only the reader's own commits, then nothing: the watcher's
        // interval grows to its longest meanwhile.
        _ = try await reader.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("own")])]))
        try await Task.sleep(for: .milliseconds(400))
        for name in ["first", "second"] {
            let commit = try await writer.commit(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string(name)])], author: name))
            let id = try #require(commit.permanentIDs.values.first)
            var seen: [HistoryTransaction] = []
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while seen.isEmpty, ContinuousClock.now < deadline {
                guard let update = try await updates.next() else { break }
                seen += update.transactions
            }
            #expect(seen.map(\.author) == [name])
            #expect(seen.first?.changes.map(\.objectID) == [id])
        }
        try await writer.close()
        try await reader.close()
    }
}
