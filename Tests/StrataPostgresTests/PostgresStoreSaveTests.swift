import Foundation
import Logging
import PostgresNIO
import StrataModel
import StrataPostgres
import StrataPostgresTesting
import StrataStore
import Testing

/// What a PostgreSQL store's saves do that the conformance suite cannot
/// show: waiting for another session's row lock at most the busy timeout,
/// and refusing what its history cannot record.
@Suite(.enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipComment)), .timeLimit(.minutes(1)))
struct PostgresStoreSaveTests {
    static let model = ObjectModel(name: "Shelf", entities: [EntityDescription(name: "Book", attributes: [.init(name: "title", type: .string, isOptional: true)])])

    static func open(_ schema: String, busyTimeout: Duration = .seconds(5)) async throws -> PostgresStore {
        let base = try #require(PostgresTestServer.url)
        let url = try #require(URL(string: base + "?schema=" + schema))
        return try await PostgresStore(description: StoreDescription(url: url, type: .postgres, busyTimeout: busyTimeout), model: model)
    }

    static func insert(_ store: PostgresStore, _ changes: StoreChanges) async throws -> StoreCommit {
        let result = try await store.save(changes)
        guard case .committed(let commit) = result else { throw StrataError(.storeSave, "expected a commit, got \(result)") }
        return commit
    }

    @Test("A save waiting for a row another session holds fails with 134090 past the busy timeout, and writes nothing")
    func lockWaitEndsAtTheBusyTimeout() async throws {
        let schema = PostgresTestServer.uniqueSchemaName("save")
        let store = try await Self.open(schema, busyTimeout: .milliseconds(300))
        let saved = try await Self.insert(store, StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("held")])]))
        let id = try #require(saved.insertedIDs.first)
        let key = try #require(id.primaryKey)
        try await PostgresTestServer.withClient(searchPath: schema) { client in
            try await client.withConnection { connection in
                let logger = Logger(label: "strata.tests.postgres")
                try await connection.query("BEGIN", logger: logger)
                try await connection.query("SELECT 1 FROM \"ZBOOK\" WHERE \"Z_PK\" = \(key) FOR UPDATE", logger: logger)
                do {
                    _ = try await store.save(StoreChanges(updates: [.init(objectID: id, expectedVersion: 1, values: ["title": .string("changed")])]))
                    Issue.record("a save went through a row another session holds")
                } catch let error as StrataError {
                    #expect(error.code == .storeTimeout, "\(error)")
                }
                try await connection.query("ROLLBACK", logger: logger)
            }
        }
        let snapshot = try #require(try await store.snapshots(for: [id]).first)
        #expect(snapshot["title"] == .string("held"))
        #expect(snapshot.version == 1)
        try await store.close()
    }

    @Test("An author or context name holding U+0000 is refused before the save is queued")
    func nulAuthorIsRefused() async throws {
        let store = try await Self.open(PostgresTestServer.uniqueSchemaName("save"))
        for (author, context) in [("a\u{0}b", nil), (nil, "c\u{0}")] as [(String?, String?)] {
            do {
                _ = try await store.save(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: [:])], author: author, contextName: context))
                Issue.record("a save with U+0000 in its author or context was accepted")
            } catch let error as StrataError {
                #expect(error.code == .invalidValue)
                #expect(error.message.contains("U+0000"), "\(error.message)")
            }
        }
        #expect(try await store.history(after: nil, limit: 10).isEmpty)
        try await store.close()
    }
}
