import Foundation
import Logging
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
}
