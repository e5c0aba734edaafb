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
}
