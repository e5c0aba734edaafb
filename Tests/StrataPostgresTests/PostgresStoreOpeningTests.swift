import Foundation
import Logging
import PostgresNIO
import StrataModel
import StrataPostgresTesting
import StrataQuery
import Testing
@testable import StrataPostgres

/// Opening a PostgreSQL store's schema against a real server: created once
/// under an advisory lock however many servers start together, kept, and
/// refused for another version of the model.
@Suite(.enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipComment)), .timeLimit(.minutes(1)))
struct PostgresStoreOpeningTests {
    static let logger = Logger(label: "strata.tests.postgres")

    /// A library: every attribute type, a to-one with its to-many inverse,
    /// a many-to-many, a subentity, an index and a uniqueness constraint.
    static func model(extraAttribute: Bool = false) -> ObjectModel {
        var bookAttributes: [AttributeDescription] = [
            .init(name: "title", type: .string),
            .init(name: "subtitle", type: .string, isOptional: true),
            .init(name: "pages", type: .integer32, isOptional: true),
            .init(name: "edition", type: .integer16, isOptional: true),
            .init(name: "isbn", type: .integer64, isOptional: true),
            .init(name: "price", type: .decimal, isOptional: true),
            .init(name: "rating", type: .double, isOptional: true),
            .init(name: "weight", type: .float, isOptional: true),
            .init(name: "published", type: .date, isOptional: true),
            .init(name: "inPrint", type: .boolean, isOptional: true),
            .init(name: "cover", type: .binary, isOptional: true),
            .init(name: "uuid", type: .uuid),
            .init(name: "homepage", type: .uri, isOptional: true),
        ]
        if extraAttribute { bookAttributes.append(.init(name: "language", type: .string, isOptional: true)) }
        return ObjectModel(name: "Library", entities: [
            EntityDescription(
                name: "Book", attributes: bookAttributes,
                relationships: [
                    .init(name: "author", destination: "Author", inverse: "books"),
                    .init(name: "tags", destination: "Tag", inverse: "books", toMany: true),
                ],
                fetchIndexes: [FetchIndex(name: "byTitle", elements: [.init(property: "title")])],
                uniquenessConstraints: [["uuid"]]
            ),
            EntityDescription(name: "EBook", parent: "Book", attributes: [.init(name: "format", type: .string, isOptional: true)]),
            EntityDescription(name: "Author", attributes: [.init(name: "name", type: .string)], relationships: [
                .init(name: "books", destination: "Book", inverse: "author", toMany: true, ordered: true),
            ]),
            EntityDescription(name: "Tag", attributes: [.init(name: "name", type: .string)], relationships: [
                .init(name: "books", destination: "Book", inverse: "tags", toMany: true),
            ]),
        ])
    }

    /// Runs `body` with a client whose sessions use a fresh schema, dropped afterwards.
    func withSchema(_ body: @Sendable (PostgresClient, String) async throws -> Void) async throws {
        let name = PostgresTestServer.uniqueSchemaName("strata_open")
        try await PostgresTestServer.withClient(searchPath: name) { client in
            try await PostgresTestServer.dropAbandonedSchemas("strata_open", client: client)
            do {
                try await body(client, name)
            } catch {
                _ = try? await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(name)\" CASCADE"))
                throw error
            }
            try await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(name)\" CASCADE"))
        }
    }

    @Test("A new schema gets the model's tables with exact types, folded copies, bookkeeping and metadata; reopening keeps the store's UUID")
    func createsAndReopens() async throws {
        try await withSchema { client, schema in
            let model = Self.model()
            let opened = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: model, configuration: nil, logger: Self.logger)
            #expect(UUID(uuidString: opened.identifier) != nil)
            var types: [String: String] = [:]
            let rows = try await client.query("SELECT table_name::text, column_name::text, data_type::text, coalesce(collation_name::text, '') FROM information_schema.columns WHERE table_schema = \(schema)")
            for try await (table, column, type, collation) in rows.decode((String, String, String, String).self) {
                types["\(table).\(column)"] = type + (collation.isEmpty ? "" : " \(collation)")
            }
            #expect(types["ZBOOK.Z_PK"] == "bigint")
            #expect(types["ZBOOK.ZTITLE"] == "text C")
            #expect(types["ZBOOK.ZTITLE__F1"] == "text C")
            #expect(types["ZBOOK.ZTITLE__F3"] == "text C")
            #expect(types["ZBOOK.ZPRICE"] == "numeric")
            #expect(types["ZBOOK.ZUUID"] == "uuid")
            #expect(types["ZBOOK.ZCOVER"] == "bytea")
            #expect(types["ZBOOK.ZPUBLISHED"] == "double precision")
            #expect(types["ZBOOK.ZINPRINT"] == "smallint")
            #expect(types["ZBOOK.ZPAGES"] == "bigint")
            #expect(types["ZBOOK.ZFORMAT"] == "text C")
            #expect(types["Z_METADATA.Z_VALUE"] == "text")
            #expect(types["ZBOOK.ZPAGES__F1"] == nil)
            var indexes: [String] = []
            for try await definition in try await client.query("SELECT indexdef::text FROM pg_indexes WHERE schemaname = \(schema)").decode(String.self) {
                indexes.append(definition)
            }
            #expect(indexes.contains { $0.contains("UNIQUE INDEX") && $0.contains("\"ZUUID\"") })
            #expect(indexes.contains { $0.contains("\"ZTITLE\"") && !$0.contains("UNIQUE") })
            var keys: [String] = []
            for try await name in try await client.query("SELECT \"Z_NAME\" FROM \"Z_PRIMARYKEY\" ORDER BY 1").decode(String.self) { keys.append(name) }
            #expect(keys == ["Author", "Book", "Tag"])
            let again = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: model, configuration: nil, logger: Self.logger)
            #expect(again.identifier == opened.identifier)
            #expect(again.schema.layout.entityNumberMap == opened.schema.layout.entityNumberMap)
        }
    }

    @Test("A lightweight change migrates in place (folded copies included); going back, or with migration off, is 134100 naming what differs")
    func migratesLightweightChangesAndRefusesOthers() async throws {
        try await withSchema { client, schema in
            let opened = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: Self.model(), configuration: nil, logger: Self.logger)
            // Migration off: the added attribute is refused, nothing changes.
            do {
                _ = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: Self.model(extraAttribute: true), configuration: nil,
                                                        migratesAutomatically: false, logger: Self.logger)
                Issue.record("expected 134100")
            } catch let error as StrataError {
                #expect(error.code == .incompatibleVersionHash)
                #expect(error.details.contains { $0.contains("Book.language") }, "\(error.details)")
                #expect(!error.message.contains("SELECT"))
            }
            // Read-only: no migration either.
            await #expect(throws: StrataError.self) {
                _ = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: Self.model(extraAttribute: true), configuration: nil,
                                                        readOnly: true, logger: Self.logger)
            }
            // An added optional attribute migrates in place: its column and
            // its folded copies, the same store.
            let migrated = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: Self.model(extraAttribute: true), configuration: nil, logger: Self.logger)
            #expect(migrated.identifier == opened.identifier)
            var columns: Set<String> = []
            for try await name in try await client.query("SELECT column_name::text FROM information_schema.columns WHERE table_schema = \(schema)").decode(String.self) {
                columns.insert(name)
            }
            #expect(columns.isSuperset(of: ["ZLANGUAGE", "ZLANGUAGE__F1", "ZLANGUAGE__F2", "ZLANGUAGE__F3"]), "\(columns.sorted())")
            // And opens again as it is now.
            let again = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: Self.model(extraAttribute: true), configuration: nil, logger: Self.logger)
            #expect(again.identifier == opened.identifier)
            // Removing the attribute is not lightweight.
            do {
                _ = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: Self.model(), configuration: nil, logger: Self.logger)
                Issue.record("expected 134100")
            } catch let error as StrataError {
                #expect(error.code == .incompatibleVersionHash)
                #expect(error.details.contains("Book.language: attribute removed (was String)"), "\(error.details)")
            }
        }
    }

    @Test("A schema holding other tables is not taken over (134080)")
    func refusesForeignTables() async throws {
        try await withSchema { client, schema in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \"\(schema)\""))
            try await client.query("CREATE TABLE invoices (id bigint)")
            await #expect(throws: StrataError.self) {
                _ = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: Self.model(), configuration: nil, logger: Self.logger)
            }
            do {
                _ = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: Self.model(), configuration: nil, logger: Self.logger)
            } catch let error as StrataError {
                #expect(error.code == .storeOpen)
                #expect(error.message.contains("invoices"))
            }
        }
        // A schema holding only a sequence is not empty either.
        try await withSchema { client, schema in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \"\(schema)\""))
            try await client.query("CREATE SEQUENCE invoice_numbers")
            do {
                _ = try await PostgresStoreOpening.open(client: client, schemaName: schema, model: Self.model(), configuration: nil, logger: Self.logger)
                Issue.record("a schema with a sequence was taken over")
            } catch let error as StrataError {
                #expect(error.message.contains("invoice_numbers"))
            }
        }
    }

    @Test("A role given only its own schema (no right to create schemas) opens its store")
    func leastPrivilegeRole() async throws {
        try await withSchema { client, schema in
            let role = "strata_role_\(UInt32.random(in: 0...UInt32.max))"
            let password = "p\(UInt64.random(in: 0...UInt64.max))"
            try await client.query(PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN PASSWORD '\(password)'"))
            try await client.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \"\(schema)\" AUTHORIZATION \(role)"))
            do {
                var configuration = try PostgresTestServer.configuration(searchPath: schema)
                configuration.username = role
                configuration.password = password
                let limited = PostgresClient(configuration: configuration, backgroundLogger: Self.logger)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await limited.run() }
                    defer { group.cancelAll() }
                    let opened = try await PostgresStoreOpening.open(client: limited, schemaName: schema, model: Self.model(), configuration: nil, logger: Self.logger)
                    #expect(UUID(uuidString: opened.identifier) != nil)
                }
            } catch {
                _ = try? await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"))
                _ = try? await client.query(PostgresQuery(unsafeSQL: "DROP ROLE IF EXISTS \(role)"))
                throw error
            }
            try await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"))
            try await client.query(PostgresQuery(unsafeSQL: "DROP ROLE IF EXISTS \(role)"))
        }
    }

    @Test("Eight servers opening one new schema at once: one creates it, all get the same store, whatever the default isolation", arguments: ["read committed", "repeatable read"])
    func concurrentOpens(_ isolation: String) async throws {
        try await withSchema { _, schema in
            // Each opener answers its identifier or its error: one failing
            // must not cancel the others mid-transaction.
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        // A client of its own per "server", its sessions'
                        // transactions at `isolation` unless told otherwise.
                        var configuration = try PostgresTestServer.configuration(searchPath: schema)
                        configuration.options.additionalStartupParameters.append(("default_transaction_isolation", isolation))
                        let client = PostgresClient(configuration: configuration, backgroundLogger: Self.logger)
                        return await withTaskGroup(of: Void.self) { running in
                            running.addTask { await client.run() }
                            defer { running.cancelAll() }
                            do {
                                return try await PostgresStoreOpening.open(client: client, schemaName: schema, model: Self.model(), configuration: nil, logger: Self.logger).identifier
                            } catch {
                                return "failed: \(error)"
                            }
                        }
                    }
                }
                var all: [String] = []
                for try await outcome in group { all.append(outcome) }
                return all
            }
            #expect(outcomes.count == 8)
            #expect(outcomes.allSatisfy { UUID(uuidString: $0) != nil }, "\(outcomes.filter { UUID(uuidString: $0) == nil })")
            #expect(Set(outcomes).count == 1)
        }
    }

    @Test("A schema named with capitals is the one the sessions use")
    func mixedCaseSchema() async throws {
        let name = "Strata_Mixed_" + PostgresTestServer.uniqueSchemaName("x")
        try await PostgresTestServer.withClient(searchPath: name) { client in
            do {
                let opened = try await PostgresStoreOpening.open(client: client, schemaName: name, model: Self.model(), configuration: nil, logger: Self.logger)
                var tables = 0
                for try await _ in try await client.query("SELECT 1 FROM information_schema.tables WHERE table_schema = \(name)") { tables += 1 }
                #expect(tables > 3)
                #expect(try await PostgresStoreOpening.open(client: client, schemaName: name, model: Self.model(), configuration: nil, logger: Self.logger).identifier == opened.identifier)
            } catch {
                _ = try? await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(name)\" CASCADE"))
                throw error
            }
            try await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(name)\" CASCADE"))
        }
    }

    @Test("Names PostgreSQL would cut are refused before anything is created")
    func longNamesAreRefused() throws {
        let long = String(repeating: "a", count: 60)
        let model = ObjectModel(name: "Long", entities: [EntityDescription(name: "Thing", attributes: [.init(name: long, type: .string)])])
        #expect(throws: StrataError.self) { try PostgresSchema(layout: try SQLSchema(model: model)) }
    }
}
