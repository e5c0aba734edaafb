import Foundation
import Logging
import PostgresNIO
import StrataModel
import StrataPostgres
import StrataPostgresTesting
import StrataQuery
import StrataStore
import Testing

/// A PostgreSQL store opened with a newer model keeps its objects: the
/// added attribute's default is written into the existing rows, folded
/// copies included, so that `[c]` finds them.
@Suite(.enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipComment)), .timeLimit(.minutes(1)))
struct PostgresStoreMigrationTests {
    static func model(language: Bool) -> ObjectModel {
        var attributes: [AttributeDescription] = [.init(name: "title", type: .string, isOptional: true)]
        if language { attributes.append(.init(name: "language", type: .string, isOptional: false, defaultValue: .string("En"))) }
        return ObjectModel(name: "Shelf", entities: [EntityDescription(name: "Book", attributes: attributes)])
    }

    @Test("Objects saved before a lightweight migration read back with the added attribute's default, and [c] finds it")
    func objectsSurviveAMigration() async throws {
        let base = try #require(PostgresTestServer.url)
        let url = try #require(URL(string: base + "?schema=" + PostgresTestServer.uniqueSchemaName("mig")))
        let description = StoreDescription(url: url, type: .postgres)
        let before = try await PostgresStore(description: description, model: Self.model(language: false))
        let commit = try await before.save(StoreChanges(inserts: [
            .init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("Dune")]),
            .init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("Emma")]),
        ]))
        guard case .committed(let saved) = commit else {
            Issue.record("expected a commit, got \(commit)")
            return
        }
        try await before.close()

        let after = try await PostgresStore(description: description, model: Self.model(language: true))
        #expect(after.identifier == before.identifier)
        let snapshots = try await after.snapshots(for: saved.insertedIDs)
        #expect(snapshots.map { $0["language"] } == [.string("En"), .string("En")])
        let model = Self.model(language: true)
        let request = try FetchRequest(entityName: "Book", format: "language ==[c] 'EN'")
        let found = try await after.fetchObjectIDs(try PredicateResolver(model: model).resolve(request, variables: [:], source: nil))
        #expect(Set(found) == Set(saved.insertedIDs))
        // New objects take the attribute as given.
        let next = try await after.save(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("Ubik"), "language": .string("fr")])]))
        guard case .committed = next else {
            Issue.record("expected a commit, got \(next)")
            return
        }
        #expect(try await after.count(try PredicateResolver(model: model).resolve(try FetchRequest(entityName: "Book", format: "language ==[c] 'FR'"), variables: [:], source: nil)) == 1)
        try await after.close()
    }

    @Test("A store made before the LIKE copies existed gets them at its next open, filled from its rows; a read-only open refuses it")
    func missingCompanionsAreAddedAndFilled() async throws {
        let base = try #require(PostgresTestServer.url)
        let schema = PostgresTestServer.uniqueSchemaName("mig")
        let url = try #require(URL(string: base + "?schema=" + schema))
        let description = StoreDescription(url: url, type: .postgres)
        let model = Self.model(language: false)
        let store = try await PostgresStore(description: description, model: model)
        // A decomposed é is one Character of two scalars: its units are not
        // the text, so its LIKE copy is not NULL.
        let titles = ["e\u{301}clair", "eclair", "Éclair"] + (0..<600).map { "Book \($0)" }
        let commit = try await store.save(StoreChanges(inserts: titles.map { .init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string($0)]) }))
        guard case .committed = commit else {
            Issue.record("expected a commit, got \(commit)")
            return
        }
        try await store.close()
        // As an earlier Strata left it: no LIKE copies.
        try await PostgresTestServer.withClient { client in
            for options in [0, 1, 2, 3] {
                try await client.query(PostgresQuery(unsafeSQL: "ALTER TABLE \"\(schema)\".\"ZBOOK\" DROP COLUMN \"ZTITLE__L\(options)\""))
            }
        }
        var readOnly = description
        readOnly.isReadOnly = true
        await #expect { _ = try await PostgresStore(description: readOnly, model: model) } throws: { error in
            (error as? StrataError)?.message.contains("ZTITLE__L0") == true
        }

        let reopened = try await PostgresStore(description: description, model: model)
        let resolver = PredicateResolver(model: model)
        func count(_ format: String) async throws -> Int {
            try await reopened.count(try resolver.resolve(try FetchRequest(entityName: "Book", format: format), variables: [:], source: nil))
        }
        // ? is one Character, the decomposed é included; a literal e is
        // not the first Character of "e\u{301}clair" unless [d] folds it.
        #expect(try await count("title LIKE '?clair'") == 3)
        #expect(try await count("title LIKE 'e*'") == 1)
        #expect(try await count("title LIKE[d] 'e*'") == 2)
        #expect(try await count("title LIKE 'Book ?99'") == 5)
        let filled = try await PostgresTestServer.withClient { client -> Int64 in
            var filled: Int64 = 0
            for try await n in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(\"ZTITLE__L0\") FROM \"\(schema)\".\"ZBOOK\"")).decode(Int64.self) { filled = n }
            return filled
        }
        #expect(filled == 1)
        try await reopened.close()
    }
}
