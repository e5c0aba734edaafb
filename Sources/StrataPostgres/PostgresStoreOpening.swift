import Foundation
import Logging
import PostgresNIO
import StrataModel
import StrataQuery
import StrataStore

/// Opening a PostgreSQL store's schema: what every server does when it
/// starts, safely at the same time as any number of others.
///
/// In one transaction, under a transaction-scoped advisory lock keyed by
/// the schema's name (so servers starting together take turns, and a
/// server that dies releases it):
/// - the schema is created if missing;
/// - an empty schema gets the store's tables (``PostgresSchema``), its
///   bookkeeping tables (`Z_METADATA`, `Z_PRIMARYKEY` with one row per
///   hierarchy), its history tables (``PostgresHistory``) and its metadata (``SQLStoreMetadata``: a new store UUID,
///   entity version hashes, shapes and the layout with PostgreSQL's
///   column types);
/// - a schema holding other tables and no `Z_METADATA` is refused (134080);
/// - a Strata store made with another version of the model is migrated in
///   place when the differences are lightweight (``SQLMigrationPlanner``:
///   added entities, optional or defaulted attributes, optional
///   relationships, indexes, relaxed optionality; folded copies of added
///   text columns added and filled with them), in the same transaction, so
///   that servers starting together migrate it once; anything else is
///   refused with 134100 listing what differs, entity by entity. A
///   read-only open migrates nothing: it refuses a store that needs more
///   than index changes;
/// - companion columns a store made by an earlier Strata lacks are added
///   and filled (``addMissingCompanions(connection:schemaName:schema:readOnly:place:logger:)``).
package enum PostgresStoreOpening {
    /// An opened store's schema.
    package struct Opened: Sendable {
        /// The store's UUID.
        package var identifier: String
        /// Its tables, with the entity numbers the store was made with.
        package var schema: PostgresSchema
    }

    /// Opens the store of `model`'s `configuration` in the schema named
    /// `schemaName`, on a connection of `client`, whose sessions must use
    /// `schemaName` as their `search_path`.
    package static func open(
        client: PostgresClient,
        schemaName: String,
        model: ObjectModel,
        configuration: String?,
        readOnly: Bool = false,
        migratesAutomatically: Bool = true,
        logger: Logger
    ) async throws -> Opened {
        do {
            return try await client.withConnection { connection in
                try await open(connection: connection, schemaName: schemaName, model: model, configuration: configuration, readOnly: readOnly,
                               migratesAutomatically: migratesAutomatically, logger: logger)
            }
        } catch {
            throw PostgresErrors.strataError(error, failure: .storeOpen, doing: "opening PostgreSQL schema \(schemaName)")
        }
    }

    /// ``open(client:schemaName:model:configuration:readOnly:migratesAutomatically:logger:)``
    /// on `connection` (whose `search_path` is `schemaName`).
    package static func open(
        connection: PostgresConnection,
        schemaName: String,
        model: ObjectModel,
        configuration: String?,
        readOnly: Bool = false,
        migratesAutomatically: Bool = true,
        logger: Logger
    ) async throws -> Opened {
        let names = StoreOpening.entityNames(configuration: configuration, model: model).sorted()
        let place = "PostgreSQL schema \(schemaName)"
        do {
            return try await openInTransaction(connection: connection, schemaName: schemaName, model: model, names: names, configuration: configuration, readOnly: readOnly,
                                               migratesAutomatically: migratesAutomatically, place: place, logger: logger)
        } catch {
            throw PostgresErrors.strataError(error, failure: .storeOpen, doing: "opening \(place)")
        }
    }

    private static func openInTransaction(
        connection: PostgresConnection,
        schemaName: String,
        model: ObjectModel,
        names: [String],
        configuration: String?,
        readOnly: Bool,
        migratesAutomatically: Bool,
        place: String,
        logger: Logger
    ) async throws -> Opened {
        try await connection.withTransaction(logger: logger) { connection in
            // Each statement sees what committed before it (a second opener,
            // once it has the lock, sees the first one's tables), whatever
            // the database's default isolation.
            try await connection.query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED", logger: logger)
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey(schemaName)))", logger: logger)
            // Strata counts Characters in PostgreSQL's regular expressions,
            // which see code points only in a UTF-8 database.
            for try await encoding in try await connection.query("SELECT pg_catalog.getdatabaseencoding()::text", logger: logger).decode(String.self) where encoding != "UTF8" {
                throw StrataError(.storeOpen, "\(place) is in a database encoded \(encoding): Strata needs UTF8 (CREATE DATABASE … ENCODING 'UTF8')")
            }
            // CREATE SCHEMA only when missing: it needs the right to create
            // in the database even when the schema exists, which a role
            // given only its own schema does not have.
            var exists = false
            for try await _ in try await connection.query("SELECT 1 FROM pg_namespace WHERE nspname = \(schemaName)", logger: logger) { exists = true }
            if !exists {
                guard !readOnly else { throw StrataError(.storeOpen, "\(place) does not exist, and a read-only store does not create it") }
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(SQLSchema.quote(schemaName))"), logger: logger)
            }
            // Every relation of the schema (tables, views, sequences…),
            // whatever this role may read of them.
            var tables: [String] = []
            let relations = try await connection.query(
                "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = \(schemaName) AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')",
                logger: logger)
            for try await name in relations.decode(String.self) {
                tables.append(name)
            }
            if tables.isEmpty {
                guard !readOnly else { throw StrataError(.storeOpen, "\(place) holds no store, and a read-only store does not create one") }
                let schema = try PostgresSchema(layout: try SQLSchema(model: model, entityNames: names))
                let metadata = try SQLStoreMetadata(identifier: UUID().uuidString, model: model, schema: schema.layout, columnType: schema.columnType)
                for statement in bookkeepingStatements + PostgresHistory.createStatements + schema.createStatements() {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                for table in schema.layout.tables {
                    try await connection.query("INSERT INTO \(unescaped: SQLSchema.quote(SQLStoreMetadata.primaryKeyTableName)) (\"Z_NAME\", \"Z_MAX\") VALUES (\(table.rootEntity), 0)", logger: logger)
                }
                for (key, text) in try metadata.keyTexts() {
                    try await connection.query("INSERT INTO \(unescaped: SQLSchema.quote(SQLStoreMetadata.tableName)) (\"Z_KEY\", \"Z_VALUE\") VALUES (\(key), \(text))", logger: logger)
                }
                return Opened(identifier: metadata.identifier, schema: schema)
            }
            guard tables.contains(SQLStoreMetadata.tableName) else {
                throw StrataError(.storeOpen, "\(place) holds tables that are not a Strata store's (\(tables.sorted().prefix(5).joined(separator: ", ")))")
            }
            var texts: [String: String] = [:]
            for try await (key, text) in try await connection.query("SELECT \"Z_KEY\", \"Z_VALUE\" FROM \(unescaped: SQLSchema.quote(SQLStoreMetadata.tableName))", logger: logger).decode((String, String).self) {
                texts[key] = text
            }
            let stored = try SQLStoreMetadata.decode(path: place) { key in
                guard let text = texts[key] else {
                    throw StrataError(.storeOpen, "\(place): metadata key '\(key)' is missing from \(SQLStoreMetadata.tableName)")
                }
                return text
            }
            let schema = try PostgresSchema(layout: try SQLSchema(model: model, entityNames: names, entityNumbers: stored.layout.entityNumbers))
            let target = try SQLStoreMetadata(identifier: stored.identifier, model: model, schema: schema.layout, columnType: schema.columnType)
            let plan = try SQLMigrationPlanner(
                stored: stored, target: target, model: model, schema: schema.layout, place: place, configuration: configuration,
                migratesAutomatically: migratesAutomatically, backend: migrationBackend(schema)
            ).plan()
            if plan.rewritesMetadata {
                if readOnly {
                    guard !plan.changesData else {
                        let what = plan.changes.isEmpty ? "its tables must be renamed for this model" : plan.changes.joined(separator: "; ")
                        throw StrataError(.incompatibleVersionHash, "\(place) needs a migration but is opened read-only: \(what)", details: plan.changes)
                    }
                } else {
                    let runner = PostgresStatementRunner(connection: connection, logger: logger)
                    for step in plan.steps {
                        try await runner.run(step.sql, step.arguments)
                    }
                    try await connection.query("DELETE FROM \(unescaped: SQLSchema.quote(SQLStoreMetadata.tableName))", logger: logger)
                    var metadata = target
                    metadata.identifier = stored.identifier
                    for (key, text) in try metadata.keyTexts() {
                        try await connection.query("INSERT INTO \(unescaped: SQLSchema.quote(SQLStoreMetadata.tableName)) (\"Z_KEY\", \"Z_VALUE\") VALUES (\(key), \(text))", logger: logger)
                    }
                    logger.notice("migrated \(place) in place", metadata: ["changes": "\(plan.changes.joined(separator: "; "))"])
                }
            }
            try await addMissingCompanions(connection: connection, schemaName: schemaName, schema: schema, readOnly: readOnly, place: place, logger: logger)
            if !tables.contains(PostgresHistory.stateTable) {
                guard !readOnly else { throw StrataError(.storeOpen, "\(place) has no history tables, and a read-only store does not create them") }
                for statement in PostgresHistory.createStatements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            return Opened(identifier: stored.identifier, schema: schema)
        }
    }

    /// Adds, and fills from the text beside them, the companion columns
    /// (``PostgresCompanion``) that a store made by an earlier Strata lacks
    /// (the `LIKE` units came after the folded copies). A read-only open
    /// refuses such a store, naming the first missing column. The table is
    /// locked (`ADD COLUMN`) until the open commits: other servers wait
    /// for the fill, which reads only the rows it may change.
    static func addMissingCompanions(connection: PostgresConnection, schemaName: String, schema: PostgresSchema, readOnly: Bool, place: String, logger: Logger) async throws {
        var present: Set<String> = []
        let columns = try await connection.query(
            "SELECT c.relname::text, a.attname::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = \(schemaName) AND a.attnum > 0 AND NOT a.attisdropped",
            logger: logger)
        for try await (table, column) in columns.decode((String, String).self) {
            present.insert(table + "." + column)
        }
        let runner = PostgresStatementRunner(connection: connection, logger: logger)
        let q = SQLSchema.quote
        for table in schema.layout.tables {
            for column in table.columns where schema.isText(column) && present.contains(table.name + "." + column.name) {
                let missing = PostgresCompanion.all.enumerated().filter { !present.contains(table.name + "." + $0.element.column(column.name)) }
                guard let first = missing.first else { continue }
                guard !readOnly else {
                    throw StrataError(.storeOpen, "\(place) lacks column \(first.element.column(column.name)) of table \(table.name), which this version of Strata keeps; open it once read-write to add it")
                }
                for (_, companion) in missing {
                    try await runner.run("ALTER TABLE \(q(table.name)) ADD COLUMN \(q(companion.column(column.name))) text COLLATE \"C\"", [])
                }
                // Filled a page of rows at a time, in key order, one UPDATE
                // per page and column. Units are NULL for text of ASCII
                // letters, digits and punctuation (most text): when only
                // units are missing, PostgreSQL leaves those rows out.
                let onlyUnits = missing.allSatisfy { if case .likeUnits = $0.element { true } else { false } }
                let filter = onlyUnits ? " AND \(q(column.name)) ~ '[^\\u0003-\\u000C\\u000E-\\u007F]'" : ""
                var last = Int64.min
                while true {
                    let rows = try await runner.run(
                        "SELECT \(q("Z_PK")), \(q(column.name)) FROM \(q(table.name)) WHERE \(q(column.name)) IS NOT NULL\(filter) AND \(q("Z_PK")) > $1 ORDER BY \(q("Z_PK")) LIMIT 1000",
                        [.integer(last)])
                    guard !rows.isEmpty else { break }
                    var keys: [[Int64]] = Array(repeating: [], count: missing.count)
                    var texts: [[String]] = Array(repeating: [], count: missing.count)
                    for row in rows {
                        let key = try row[0].decode(Int64.self)
                        let values = PostgresCompanion.values(.text(try row[1].decode(String.self)))
                        last = key
                        for (slot, (index, _)) in missing.enumerated() {
                            guard case .text(let text) = values[index] else { continue }
                            keys[slot].append(key)
                            texts[slot].append(text)
                        }
                    }
                    for (slot, (_, companion)) in missing.enumerated() where !keys[slot].isEmpty {
                        var binds = PostgresBindings()
                        binds.append(keys[slot])
                        binds.append(texts[slot])
                        try await runner.run(PostgresQuery(
                            unsafeSQL: "UPDATE \(q(table.name)) SET \(q(companion.column(column.name))) = v.x FROM unnest($1::bigint[], $2::text[]) AS v(k, x) WHERE \(q(table.name)).\(q("Z_PK")) = v.k",
                            binds: binds))
                    }
                }
                logger.notice("added the copies this version of Strata keeps beside a text column", metadata: [
                    "table": "\(table.name)", "column": "\(column.name)", "added": "\(missing.map { $0.element.column(column.name) }.joined(separator: ", "))",
                ])
            }
        }
    }

    /// The store's own tables: metadata (key → text) and the next primary
    /// key of each hierarchy.
    static let bookkeepingStatements = [
        "CREATE TABLE \(SQLSchema.quote(SQLStoreMetadata.tableName)) (\"Z_KEY\" text COLLATE \"C\" PRIMARY KEY, \"Z_VALUE\" text NOT NULL)",
        "CREATE TABLE \(SQLSchema.quote(SQLStoreMetadata.primaryKeyTableName)) (\"Z_NAME\" text COLLATE \"C\" PRIMARY KEY, \"Z_MAX\" bigint NOT NULL)",
    ]

    /// The advisory lock of a schema: FNV-1a 64 of its name, the same in
    /// every process.
    static func lockKey(_ schemaName: String) -> Int64 {
        Int64(bitPattern: SQLStoreMetadata.fnv1a64("strata-schema:\(schemaName)"))
    }

    /// How the PostgreSQL store migrates: its CREATE statements, the
    /// companions kept beside each string attribute's column, and its key rows.
    static func migrationBackend(_ schema: PostgresSchema) -> SQLMigrationPlanner.Backend {
        let model = schema.layout.model
        let q = SQLSchema.quote
        return SQLMigrationPlanner.Backend(
            createStatements: schema.createStatements(),
            insertKeyRow: "INSERT INTO \(q(SQLStoreMetadata.primaryKeyTableName)) (\(q("Z_NAME")), \(q("Z_MAX"))) VALUES (?, 0) ON CONFLICT DO NOTHING",
            statement: PostgresDialect().statement
        ) { column in
            guard column.role.kind == "attribute", let entity = column.role.entity, let name = column.role.name,
                  let type = model.attribute(named: name, in: entity)?.type, type == .string || type == .uri else { return [] }
            return PostgresCompanion.all.map { companion in
                (companion.column(column.name), "text COLLATE \"C\"", { companion.value($0) })
            }
        }
    }
}
