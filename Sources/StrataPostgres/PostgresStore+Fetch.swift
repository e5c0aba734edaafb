import Logging
import PostgresNIO
import StrataModel
import StrataQuery
import StrataStore

extension PostgresStore {
    /// Snapshots of the objects a fetch selects, in order
    /// (``SQLQueryCompiler/rowQuery(_:)`` in PostgreSQL's dialect).
    public nonisolated func fetchSnapshots(_ fetch: ResolvedFetch) async throws -> [Snapshot] {
        let client = try client()
        let table = try heldTable(of: fetch)
        let query = try PostgresValueCoding.query(mapping.compiler.rowQuery(fetch))
        let decoder = self.decoder
        let logger = self.logger
        do {
            if decoder.decodesInOneStatement(table: table) {
                return try await decoder.snapshots(client.query(query, logger: logger), table: table, connection: nil, logger: logger)
            }
            return try await Self.readTransaction(client, logger: logger) { connection in
                try await decoder.snapshots(connection.query(query, logger: logger), table: table, connection: connection, logger: logger)
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "fetch of \(fetch.entityName)")
        }
    }

    /// IDs of the objects a fetch selects, in order.
    public nonisolated func fetchObjectIDs(_ fetch: ResolvedFetch) async throws -> [ObjectID] {
        let client = try client()
        _ = try heldTable(of: fetch)
        let query = try PostgresValueCoding.query(mapping.compiler.primaryKeyQuery(fetch))
        do {
            return try await decoder.objectIDs(client.query(query, logger: logger), fallbackEntity: fetch.entityName)
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "fetch of \(fetch.entityName) IDs")
        }
    }

    /// How many objects a fetch selects, limit and offset applied.
    public nonisolated func count(_ fetch: ResolvedFetch) async throws -> Int {
        let client = try client()
        _ = try heldTable(of: fetch)
        let query = try PostgresValueCoding.query(mapping.compiler.countQuery(fetch))
        do {
            for try await count in try await client.query(query, logger: logger).decode(Int64.self) { return Int(count) }
            return 0
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "count of \(fetch.entityName)")
        }
    }

    /// The current snapshots of these objects, in the order asked, each
    /// once; objects that no longer exist (or are not of this store, or not
    /// of the ID's entity) are left out. One statement per table, in one
    /// `REPEATABLE READ` transaction.
    public nonisolated func snapshots(for objectIDs: [ObjectID]) async throws -> [Snapshot] {
        let client = try client()
        let request = SnapshotRequest(objectIDs, storeIdentifier: identifier) { mapping.entities[$0]?.table }
        guard !request.isEmpty else { return [] }
        let decoder = self.decoder
        let logger = self.logger
        let requested = request.keysByTable
        let found: [String: [Int64: Snapshot]]
        do {
            found = try await Self.readTransaction(client, logger: logger) { connection in
                let runner = PostgresStatementRunner(connection: connection, logger: logger)
                var result: [String: [Int64: Snapshot]] = [:]
                for (table, keys) in requested {
                    var byKey: [Int64: Snapshot] = [:]
                    for snapshot in try await runner.snapshots(decoder, table: table, keys: Array(keys)) {
                        if let key = snapshot.objectID.primaryKey { byKey[key] = snapshot }
                    }
                    result[table] = byKey
                }
                return result
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "snapshot read")
        }
        return request.answer(found, model: model)
    }

    /// The destinations of a relationship of one object, as the SQLite
    /// store answers: a to-many in order (ordered ones by their order
    /// column, others by primary key), a to-one's destination if any; none
    /// for an object that does not exist (or is not of the ID's entity).
    public func destinations(of relationship: String, for objectID: ObjectID) async throws -> [ObjectID] {
        let client = try client()
        guard let entity = mapping.entities[objectID.entityName] else {
            throw StrataError(.invalidValue, "\(place) does not hold entity '\(objectID.entityName)' (\(objectID))")
        }
        let sourceSQL: String
        let sql: String
        let fallback: String
        switch mapping.destinationsRead(of: relationship, in: entity) {
        case .none:
            return []
        case .unknown:
            throw StrataError(.invalidValue, "\(place): entity '\(entity.name)' has no relationship '\(relationship)'")
        case .read(let source, let destinations, let entityName):
            sourceSQL = source
            sql = destinations
            fallback = entityName
        }
        guard objectID.storeIdentifier == identifier, let key = objectID.primaryKey else { return [] }
        let decoder = self.decoder
        let mapping = self.mapping
        let model = self.model
        let logger = self.logger
        let sourceEntity = entity.name
        do {
            return try await Self.readTransaction(client, logger: logger) { connection in
                let runner = PostgresStatementRunner(connection: connection, logger: logger)
                guard let number = try await runner.run(sourceSQL, [.integer(key)]).first?.first?.decode(Int64.self),
                      let actual = mapping.entitiesByNumber[number]?.name,
                      model.isEntity(actual, kindOf: sourceEntity) else { return [] }
                var bindings = PostgresBindings(capacity: 1)
                bindings.append(key)
                return try await decoder.objectIDs(connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger), fallbackEntity: fallback)
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "read of \(entity.name).\(relationship)")
        }
    }

    /// Runs `body` in one `REPEATABLE READ READ ONLY` transaction: its
    /// statements see one state of the database.
    static func readTransaction<T: Sendable>(_ client: PostgresClient, logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await client.withConnection { connection in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let result = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }
}
