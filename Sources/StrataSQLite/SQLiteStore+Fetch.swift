import GRDB
import StrataModel
import StrataStore
import StrataQuery

extension SQLiteStore {
    /// Snapshots of the objects a fetch selects, in order: the compiled
    /// ``SQLQueryCompiler/rowQuery(_:)`` run in one read transaction on a
    /// reader connection, each row decoded by column index. A fetch of an
    /// entity the store does not hold is ``StrataError/Code/invalidValue``.
    public nonisolated func fetchSnapshots(_ fetch: ResolvedFetch) async throws -> [Snapshot] {
        let database = try openDatabase()
        let table = try heldTable(of: fetch)
        let query = try mapping.compiler.rowQuery(fetch)
        let decoder = self.decoder
        let statementLimit = mapping.cachedStatementLimit
        do {
            return try await read(database, oneStatement: decoder.decodesInOneStatement(table: table), inline: !query.matchesRegularExpressions, statement: query.sql) { db in
                try decoder.snapshots(db, statement: db.boundedCachedStatement(sql: query.sql, limit: statementLimit), sql: query.sql, arguments: query.arguments, table: table)
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "fetch of \(fetch.entityName)")
        }
    }

    /// Rows per batch of ``fetchSnapshotBatches(_:)``: small enough that the
    /// caller starts soon and holds little more than it would anyway, large
    /// enough that handing a batch over costs nothing next to reading it.
    static let fetchBatchSize = 2048

    /// ``fetchSnapshots(_:)``'s snapshots in batches of
    /// ``fetchBatchSize``, decoded on a reader connection in one read
    /// transaction while the caller works on the batches already handed
    /// over. A closed store, an entity it does not hold and SQL that cannot
    /// be generated throw before this returns; SQLite's errors (preparing,
    /// reading, a file that does not match its schema) end the stream. The
    /// reading stops when the caller stops iterating. A lock met after the
    /// first batch was handed over ends the stream with 134090 at once,
    /// without the retries a fetch gets: batches already taken cannot be
    /// read again. A fetch limited to one batch is read at once, as
    /// ``fetchSnapshots(_:)`` (its errors thrown here), with no reading task;
    /// so is any fetch whose whole result turns out to fit in one batch
    /// when an inline reader can read it (``oneBatchNow(_:table:)``).
    public nonisolated func fetchSnapshotBatches(_ fetch: ResolvedFetch) async throws -> AsyncThrowingStream<[Snapshot], any Error> {
        if let limit = fetch.limit, limit <= Self.fetchBatchSize {
            return .oneBatch(try await fetchSnapshots(fetch))
        }
        let database = try openDatabase()
        let table = try heldTable(of: fetch)
        let query = try mapping.compiler.rowQuery(fetch)
        if let rows = oneBatchNow(query, table: table) { return .oneBatch(rows) }
        return readBatches(database, query: query, table: table, operation: "fetch of \(fetch.entityName)")
    }

    /// The whole result of `query` (whole rows of `table`) when it is at
    /// most one batch (``fetchBatchSize``) and an inline reader reads it at
    /// once (``SQLiteInlineReaders``); nil otherwise, having kept nothing.
    /// Most fetches without a limit find a few rows (a fetched property,
    /// the objects a predicate names): read here they cost no reading task,
    /// no stream and no hop to the pool's queue and back. A result found to
    /// be larger (its batch full, or the reader's time budget spent) is
    /// read again by the pool in batches, and its statement is left to the
    /// pool for a while, so a large result costs the rows read here once.
    private nonisolated func oneBatchNow(_ query: CompiledQuery, table: String) -> [Snapshot]? {
        guard !query.matchesRegularExpressions else { return nil }
        let decoder = self.decoder
        let statementLimit = mapping.cachedStatementLimit
        let batchSize = Self.fetchBatchSize
        var larger = false
        let rows = inlineReaders.read(oneStatement: decoder.decodesInOneStatement(table: table), statement: query.sql) { db -> [Snapshot] in
            var rows: [Snapshot] = []
            // A batch of one row more than fits ends the read.
            try decoder.snapshotBatches(db, statement: db.boundedCachedStatement(sql: query.sql, limit: statementLimit), sql: query.sql, arguments: query.arguments, table: table,
                                        batchSize: batchSize + 1) { batch in
                guard batch.count <= batchSize else {
                    larger = true
                    throw CancellationError()
                }
                rows = batch
            }
            return rows
        }
        if larger { inlineReaders.leaveToPool(query.sql) }
        return rows
    }

    /// The reading behind ``fetchSnapshotBatches(_:)``, in a task that is
    /// not the store's (nonisolated: it never waits for the store actor).
    private nonisolated func readBatches(_ database: any DatabaseWriter, query: CompiledQuery, table: String, operation: String) -> AsyncThrowingStream<[Snapshot], any Error> {
        let decoder = self.decoder
        let statementLimit = mapping.cachedStatementLimit
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [Snapshot].self, throwing: (any Error).self)
        let reading = Task {
            do {
                // Not inline: batches are handed over as they are read.
                try await read(database, inline: false) { db in
                    var handedOver = false
                    do {
                        try decoder.snapshotBatches(db, statement: db.boundedCachedStatement(sql: query.sql, limit: statementLimit), sql: query.sql, arguments: query.arguments, table: table, batchSize: Self.fetchBatchSize) { batch in
                            // The caller stopped iterating: stop reading.
                            if case .terminated = continuation.yield(batch) { throw CancellationError() }
                            handedOver = true
                        }
                    } catch let error as DatabaseError where handedOver {
                        // Not retried (a retry would hand over the first
                        // batches twice): the stream fails.
                        if SQLiteBusyRetry.isBusy(error) {
                            throw StrataError(.storeTimeout, "store \(self.path): \(operation) met another connection's lock after its first rows were handed over; not retried: \(error.message ?? "\(error)")")
                        }
                        throw self.strataError(error, failure: .storeOpen, operation: operation)
                    }
                }
                continuation.finish()
            } catch is CancellationError {
                continuation.finish()
            } catch {
                continuation.finish(throwing: strataError(error, failure: .storeOpen, operation: operation))
            }
        }
        continuation.onTermination = { _ in reading.cancel() }
        return stream
    }

    /// IDs of the objects a fetch selects, in order
    /// (``SQLQueryCompiler/primaryKeyQuery(_:)``). A fetch of an entity
    /// the store does not hold is ``StrataError/Code/invalidValue``.
    public nonisolated func fetchObjectIDs(_ fetch: ResolvedFetch) async throws -> [ObjectID] {
        let database = try openDatabase()
        _ = try heldTable(of: fetch)
        let query = try mapping.compiler.primaryKeyQuery(fetch)
        let decoder = self.decoder
        let statementLimit = mapping.cachedStatementLimit
        let entity = fetch.entityName
        do {
            return try await read(database, oneStatement: true, inline: !query.matchesRegularExpressions, statement: query.sql) { db in
                try decoder.objectIDs(statement: db.boundedCachedStatement(sql: query.sql, limit: statementLimit), arguments: query.statementArguments, fallbackEntity: entity)
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "fetch of \(fetch.entityName) IDs")
        }
    }

    /// How many objects a fetch selects, limit and offset applied
    /// (``SQLQueryCompiler/countQuery(_:)``). A fetch of an entity the
    /// store does not hold is ``StrataError/Code/invalidValue``.
    public nonisolated func count(_ fetch: ResolvedFetch) async throws -> Int {
        let database = try openDatabase()
        _ = try heldTable(of: fetch)
        let query = try mapping.compiler.countQuery(fetch)
        let statementLimit = mapping.cachedStatementLimit
        do {
            return try await read(database, oneStatement: true, inline: !query.matchesRegularExpressions, statement: query.sql) { db in
                try Int.fetchOne(db.boundedCachedStatement(sql: query.sql, limit: statementLimit), arguments: query.statementArguments) ?? 0
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "count of \(fetch.entityName)")
        }
    }

    /// The statement ``fetchSnapshots(_:)`` runs for `fetch`, for
    /// ``snapshotsNow(_:of:budget:)`` and ``visitRowsNow(_:of:budget:visitor:)``
    /// (a caller may keep it and bind other values of its parameters:
    /// ``CompiledQuery/rebinding(_:)``).
    public nonisolated func rowQuery(_ fetch: ResolvedFetch) throws(StrataError) -> CompiledQuery {
        _ = try heldTable(of: fetch)
        return try mapping.compiler.rowQuery(fetch)
    }

    /// The statement ``count(_:)`` runs for `fetch`, for
    /// ``countNow(_:budget:)``.
    public nonisolated func countQuery(_ fetch: ResolvedFetch) throws(StrataError) -> CompiledQuery {
        _ = try heldTable(of: fetch)
        return try mapping.compiler.countQuery(fetch)
    }

    /// The snapshots of `query`'s rows (a ``rowQuery(_:)`` of `entity`)
    /// read at once on the calling thread, using at most about `budget` of
    /// CPU time (and four budgets of wall time);
    /// nil, having read nothing that counts, when they cannot be read so
    /// (no read-only connection of the store free, a lock met, the budget
    /// spent, a value past ``SQLiteInlineReaders/maximumValueBytes``, a
    /// regular expression to match, any error: ``fetchSnapshots(_:)`` then
    /// answers the fetch, errors included). For callers that must not
    /// wait: an event loop.
    public nonisolated func snapshotsNow(_ query: CompiledQuery, of entity: String, budget: Duration) -> [Snapshot]? {
        guard (try? openDatabase()) != nil, let table = mapping.schema.table(for: entity)?.name, !query.matchesRegularExpressions else { return nil }
        let decoder = self.decoder
        let statementLimit = mapping.cachedStatementLimit
        return inlineReaders.read(oneStatement: decoder.decodesInOneStatement(table: table), budget: budget, statement: query.sql) { db in
            try decoder.snapshots(db, statement: db.boundedCachedStatement(sql: query.sql, limit: statementLimit), sql: query.sql, arguments: query.arguments, table: table)
        }
    }

    /// ``snapshotsNow(_:of:budget:)``'s rows handed to `visitor` as they
    /// are read, with no snapshot made (``StoredRowVisitor``); answers how
    /// many there were, or nil as ``snapshotsNow(_:of:budget:)`` does, and
    /// also when `visitor` throws or the rows' to-ones need a second
    /// statement to name their entities (``visitsRowsNow(of:)`` says which:
    /// use ``snapshotsNow(_:of:budget:)`` for those). After nil, what
    /// `visitor` received is to be dropped.
    public nonisolated func visitRowsNow(_ query: CompiledQuery, of entity: String, budget: Duration, visitor: inout some StoredRowVisitor) -> Int? {
        guard let table = mapping.oneStatementTableByEntity[entity], (try? openDatabase()) != nil,
              !query.matchesRegularExpressions else { return nil }
        let decoder = self.decoder
        let statementLimit = mapping.cachedStatementLimit
        return inlineReaders.read(oneStatement: true, budget: budget, statement: query.sql) { db in
            try decoder.visitRows(statement: db.boundedCachedStatement(sql: query.sql, limit: statementLimit), sql: query.sql, sqlHash: query.sqlHash, arguments: query.arguments, table: table, db, visitor: &visitor)
        }
    }

    /// Whether ``visitRowsNow(_:of:budget:visitor:)`` can read rows of
    /// `entity`: those whose to-ones name their entity without a second
    /// statement.
    public nonisolated func visitsRowsNow(of entity: String) -> Bool {
        mapping.oneStatementTableByEntity[entity] != nil
    }

    /// The count `query` (a ``countQuery(_:)``) answers, read at once on
    /// the calling thread as ``snapshotsNow(_:of:budget:)`` reads; nil
    /// when it cannot be.
    public nonisolated func countNow(_ query: CompiledQuery, budget: Duration) -> Int? {
        guard (try? openDatabase()) != nil, !query.matchesRegularExpressions else { return nil }
        let statementLimit = mapping.cachedStatementLimit
        return inlineReaders.read(oneStatement: true, budget: budget, statement: query.sql) { db in
            try Int.fetchOne(db.boundedCachedStatement(sql: query.sql, limit: statementLimit), arguments: query.statementArguments) ?? 0
        }
    }

    /// The table of the fetched entity, or ``StrataError/Code/invalidValue``
    /// when the store does not hold it (as the in-memory store answers).
    private nonisolated func heldTable(of fetch: ResolvedFetch) throws(StrataError) -> String {
        guard let table = mapping.schema.table(for: fetch.entityName)?.name else {
            throw StrataError(.invalidValue, "store \(path) does not hold entity '\(fetch.entityName)'")
        }
        return table
    }

    /// The current snapshots of these objects, in the order asked, each
    /// once; objects that no longer exist (or are not of this store, or not
    /// of the ID's entity) are left out. Reads `WHERE Z_PK IN (…)` per
    /// table, in chunks below SQLite's parameter limit, in one read
    /// transaction.
    public nonisolated func snapshots(for objectIDs: [ObjectID]) async throws -> [Snapshot] {
        let database = try openDatabase()
        let request = SnapshotRequest(objectIDs, storeIdentifier: identifier) { mapping.entities[$0]?.table }
        guard !request.isEmpty else { return [] }
        let decoder = self.decoder
        let requested = request.keysByTable
        // One statement (a get, a fault, the objects a save updates) is
        // its own read transaction: no BEGIN and COMMIT around it.
        let oneStatement = requested.count == 1 && requested.allSatisfy { table, keys in
            keys.count <= SQLiteRowDecoder.chunkSize && decoder.decodesInOneStatement(table: table)
        }
        let found: [String: [Int64: Snapshot]]
        do {
            found = try await read(database, oneStatement: oneStatement) { db in
                var result: [String: [Int64: Snapshot]] = [:]
                for (table, keys) in requested {
                    result[table] = try decoder.snapshots(db, table: table, keys: Array(keys))
                }
                return result
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "snapshot read")
        }
        return request.answer(found, model: model)
    }

    /// The destinations of a relationship of one object: for a to-many in
    /// order (ordered ones by their order column, others by primary key);
    /// for a to-one, its destination if any. An unsaved object, an object
    /// that no longer exists (or whose row is not of the ID's entity), or a
    /// relationship whose destination is in another store, has none: the
    /// object's row is looked up in the same read transaction as its
    /// destinations. An entity the store does not hold, or a relationship
    /// the entity does not have, is ``StrataError/Code/invalidValue``.
    public func destinations(of relationship: String, for objectID: ObjectID) async throws -> [ObjectID] {
        let database = try openDatabase()
        guard let entity = mapping.entities[objectID.entityName] else {
            throw StrataError(.invalidValue, "store \(path) does not hold entity '\(objectID.entityName)' (\(objectID))")
        }
        let sourceSQL: String
        let sql: String
        let entityName: String
        switch mapping.destinationsRead(of: relationship, in: entity) {
        case .none:
            return []
        case .unknown:
            throw StrataError(.invalidValue, "store \(path): entity '\(entity.name)' has no relationship '\(relationship)'")
        case .read(let source, let destinations, let fallback):
            sourceSQL = source
            sql = destinations
            entityName = fallback
        }
        guard objectID.storeIdentifier == identifier, let key = objectID.primaryKey else { return [] }
        let decoder = self.decoder
        let mapping = self.mapping
        let model = self.model
        let sourceEntity = entity.name
        do {
            return try await read(database) { db in
                guard let number = try Int64.fetchOne(db.cachedStatement(sql: sourceSQL), arguments: [key]),
                      let actual = mapping.entitiesByNumber[number]?.name,
                      model.isEntity(actual, kindOf: sourceEntity) else { return [] }
                return try decoder.objectIDs(statement: db.cachedStatement(sql: sql), arguments: [key], fallbackEntity: entityName)
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "read of \(entity.name).\(relationship)")
        }
    }
}

extension SQLiteStore {
    /// A read on a reader connection, retried while another connection
    /// holds a lock SQLite's busy handler does not wait for (see
    /// ``SQLiteBusyRetry``).
    ///
    /// A read of `oneStatement` runs that statement outside an explicit
    /// transaction: SQLite reads one statement from one snapshot of the
    /// database, so the BEGIN and COMMIT around it would add two
    /// statements for nothing.
    ///
    /// A read that can run at once on the caller's thread does
    /// (``SQLiteInlineReaders``: a free connection of its own, no lock
    /// met, within its time budget); any other goes through GRDB's pool.
    /// `inline: false` for a body that must run once only (one that hands
    /// out what it reads as it goes).
    nonisolated func read<T: Sendable>(_ database: any DatabaseWriter, oneStatement: Bool = false, inline: Bool = true, statement: String? = nil,
                                       _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        if inline, let value = inlineReaders.read(oneStatement: oneStatement, statement: statement, body) { return value }
        return try await SQLiteBusyRetry.run(deadline: storeDescription.busyTimeout) {
            // The transaction is begun and committed with kept statements
            // (GRDB's `read` prepares both again on every read).
            oneStatement ? try await database.unsafeRead(body)
                : try await database.unsafeRead { db in try SQLiteStatementRunner.inDeferredTransaction(db) { try body(db) } }
        }
    }
}
