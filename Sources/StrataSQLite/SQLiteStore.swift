import Foundation
import GRDB
import NIOConcurrencyHelpers
import StrataModel
import StrataStore
import StrataQuery

/// A persistent store in one SQLite file, through GRDB.
///
/// - The file is opened with a `DatabasePool` in WAL mode with
///   `synchronous=FULL` (a save is acknowledged only once its commit is
///   synced to the WAL: it survives a crash of the process or the machine;
///   concurrent saves share one commit, see ``save(_:)``) and the
///   description's busy timeout; reads run concurrently on the pool's reader
///   connections, saves on its single writer in `BEGIN IMMEDIATE`
///   transactions. Read-only stores open their connections read-only and
///   never write the file.
/// - The write-ahead log is checkpointed into the file once it holds the
///   description's ``StoreDescription/walCheckpointBytes`` (40 MiB; SQLite's
///   automatic checkpoint runs at 1000 pages), after the saves of the
///   commit are answered rather than inside their `COMMIT`
///   (``SQLiteWALMonitor``).
/// - The layout is ``SQLSchema``'s for the configuration's entities;
///   ``SQLiteStoreMetadata`` (table `Z_METADATA`) records the store's UUID,
///   the model's version hashes, the entities' persisted shapes and the
///   layout, and `Z_PRIMARYKEY` hands out primary keys inside the write
///   transaction, as Core Data does (safe across processes; keys are never
///   reused).
/// - Entity numbers (`Z_ENT`) are given when an entity joins the store (1…
///   in name order at creation, the next free numbers for entities a
///   migration adds), recorded in the metadata and handed back to the
///   layout on every open: adding an entity anywhere in the model never
///   renumbers stored rows (it changes nothing when another configuration
///   gets it, and is a lightweight migration when this one does).
/// - Opening an existing store compares what it recorded with the model:
///   identical opens, lightweight differences migrate in place in one
///   transaction (see ``SQLMigrationPlanner``), anything else fails with
///   error 134100 naming every entity and property that differs.
/// - Object IDs are `strata://<identifier>/<Entity>/p<Z_PK>` with the row's
///   actual entity (its `Z_ENT`).
///
/// Errors: 134080 when the file cannot be opened (or the store is closed, or
/// a fetch fails in SQLite), 134100 / 134020 for a model or configuration
/// that does not fit, 134030 when a save fails, 134090 when the file stayed
/// locked past the busy timeout.
public actor SQLiteStore: InsertStreamingStore, CompletionSavingStore {
    /// The store's UUID, generated when the file was created.
    public nonisolated let identifier: String
    /// How the store was opened.
    public nonisolated let storeDescription: StoreDescription
    /// The model the store serves.
    public nonisolated let model: ObjectModel
    /// The entities the store holds (its configuration's members and their subentities).
    public nonisolated let entityNames: Set<String>
    /// The layout of the store's tables.
    public nonisolated let schema: SQLSchema

    nonisolated let mapping: SQLiteStoreMapping
    nonisolated let path: String
    nonisolated let decoder: SQLiteRowDecoder
    /// What every save's transaction shares, made once.
    nonisolated let saveEnvironment: SQLiteSaveTransaction.Environment
    /// The connections; nil once closed. Behind a lock rather than the
    /// actor, so that reads start on the caller's thread without a hop.
    private nonisolated let database = NIOLockedValueBox<(any DatabaseWriter)?>(nil)
    /// Connections that read on the caller's thread (see ``read(_:oneStatement:inline:_:)``).
    nonisolated let inlineReaders: SQLiteInlineReaders
    /// The size of the write-ahead log, for checkpoints after saves.
    nonisolated let walMonitor: SQLiteWALMonitor
    /// Saves waiting for the next group commit, drained on the writer (see
    /// ``save(_:)``).
    nonisolated let saveQueue = SQLiteSaveQueue()
    /// Whether a group of saves is being written now (for tests that must
    /// know a group was formed).
    nonisolated var isCommitting: Bool { saveQueue.isDraining }
    /// How many saves wait for the next group (for tests that must know a
    /// group was formed).
    nonisolated var queuedSaveCount: Int { saveQueue.count }
    /// Group-commit and checkpoint figures (swift-metrics).
    nonisolated let metrics: SQLiteStoreMetrics
    /// Whether saves record persistent history (the file has its tables).
    public nonisolated let recordsHistory: Bool
    /// Identifies this open instance in the history it writes.
    public nonisolated let historyOrigin: String = UUID().uuidString
    /// The history tokens this instance wrote in a row, which its change
    /// watcher does not read back.
    nonisolated let ownHistory = SQLiteOwnHistory()

    /// Opens the store at `description.url`, creating the file (and its
    /// directory) when missing, migrating lightweight model changes when
    /// ``StoreDescription/migratesAutomatically`` allows it.
    ///
    /// Throws 134080 when the file cannot be opened (a read-only open of a
    /// missing file, a file that is not a Strata store, a newer format),
    /// 134100 when the model does not fit the store, 134020 when the store
    /// holds entities the configuration does not.
    public init(description: StoreDescription, model: ObjectModel) async throws {
        guard let url = description.url else {
            throw StrataError(.storeOpen, "store \(description.displayName): a SQLite store needs a file URL")
        }
        guard url.isFileURL else {
            throw StrataError(.storeOpen, "store \(url.absoluteString): a SQLite store needs a file URL")
        }
        try StoreOpening.checkConfiguration(description, model: model)
        let path = url.path
        let names = StoreOpening.entityNames(configuration: description.configuration, model: model)
        let opened = try await Self.open(description: description, path: path, entityNames: names.sorted(), model: model)
        let mapping = SQLiteStoreMapping(schema: opened.layout.schema)
        let recordsHistory = try await Self.prepareHistory(opened.database, description: description, path: path)

        self.identifier = opened.identifier
        self.storeDescription = description
        self.model = model
        self.entityNames = names
        self.schema = opened.layout.schema
        self.mapping = mapping
        self.path = path
        self.decoder = SQLiteRowDecoder(mapping: mapping, storeIdentifier: opened.identifier, path: path, keepsBindings: true)
        self.saveEnvironment = SQLiteSaveTransaction.Environment(mapping: mapping, storeIdentifier: opened.identifier, path: path)
        self.database.withLockedValue { $0 = opened.database }
        self.walMonitor = opened.walMonitor
        // One per core: as many as Swift's cooperative pool runs reads at once.
        self.inlineReaders = SQLiteInlineReaders(path: path, configuration: Self.configuration(for: description, walMonitor: opened.walMonitor),
                                                 capacity: ProcessInfo.processInfo.activeProcessorCount)
        self.metrics = SQLiteStoreMetrics(configuration: description.configuration)
        self.recordsHistory = recordsHistory
    }

    /// Creates the history tables when the description asks for history
    /// (a writable store), and answers whether saves record history: yes
    /// whenever the file has the tables, whoever created them.
    private static func prepareHistory(_ database: any DatabaseWriter, description: StoreDescription, path: String) async throws -> Bool {
        do {
            if description.tracksHistory, !description.isReadOnly {
                return try await database.writeWithoutTransaction { db in
                    if try SQLiteHistory.exists(db) { return true }
                    try db.inTransaction(.immediate) {
                        for statement in SQLiteHistory.createStatements { try db.execute(sql: statement) }
                        return .commit
                    }
                    return true
                }
            }
            return try await database.read { db in try SQLiteHistory.exists(db) }
        } catch {
            try? database.close()
            throw openError(error, path: path)
        }
    }

    // MARK: - Opening

    private struct Opened: Sendable {
        var database: any DatabaseWriter
        var walMonitor: SQLiteWALMonitor
        var identifier: String
        var layout: Layout
    }

    /// The layout the store serves and the metadata describing it.
    private struct Layout: Sendable {
        /// The entity numbers the layout was made with (nil: a new store's).
        var existingNumbers: [String: Int64]?
        var schema: SQLSchema
        var target: SQLiteStoreMetadata

        /// The layout of `entityNames` keeping `existingNumbers` (those of
        /// the store's metadata; nil for a new store).
        init(model: ObjectModel, entityNames: [String], existingNumbers: [String: Int64]?) throws(StrataError) {
            self.existingNumbers = existingNumbers
            self.schema = try SQLSchema(model: model, entityNames: entityNames, entityNumbers: existingNumbers)
            self.target = try SQLiteStoreMetadata(identifier: "", model: model, schema: schema)
        }

        /// This layout when `existingNumbers` are still the store's, else
        /// the layout made with the store's current numbers.
        func matching(_ existingNumbers: [String: Int64]?, model: ObjectModel) throws(StrataError) -> Layout {
            guard existingNumbers != self.existingNumbers else { return self }
            return try Layout(model: model, entityNames: schema.entityNames, existingNumbers: existingNumbers)
        }
    }

    private static func configuration(for description: StoreDescription, walMonitor: SQLiteWALMonitor) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = description.isReadOnly
        let timeout = description.busyTimeout.components
        configuration.busyMode = .timeout(max(0, Double(timeout.seconds) + Double(timeout.attoseconds) / 1e18))
        configuration.label = "Strata.SQLiteStore"
        // A negative cache_size is in KiB; at least one page's worth.
        let cacheKiB = description.pageCacheBytes > 0 ? max(1, description.pageCacheBytes / 1024) : nil
        let pageSize = description.pageSize
        configuration.prepareDatabase { db in
            SQLiteFunctions.register(on: db)
            // Before anything is written: a file that exists keeps its own
            // (SQLite ignores the pragma then).
            if let pageSize, !db.configuration.readonly {
                try db.execute(sql: "PRAGMA page_size = \(pageSize)")
            }
            if let cacheKiB {
                try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
            }
            if !db.configuration.readonly {
                // Checkpoints run after saves are answered (see SQLiteWALMonitor).
                // (`synchronous` is set once the pool is open: see open.)
                if let connection = db.sqliteConnection { walMonitor.install(on: connection) }
            }
        }
        return configuration
    }

    private static func open(description: StoreDescription, path: String, entityNames: [String], model: ObjectModel) async throws -> Opened {
        let fileManager = FileManager.default
        if let pageSize = description.pageSize, !StoreDescription.pageSizes.contains(pageSize) {
            throw StrataError(.storeOpen, "store \(path): page size \(pageSize) is not a power of two from 512 to 65536")
        }
        let walMonitor = SQLiteWALMonitor(checkpointBytes: description.walCheckpointBytes)
        let configuration = configuration(for: description, walMonitor: walMonitor)
        let database: any DatabaseWriter
        do {
            if description.isReadOnly {
                guard fileManager.fileExists(atPath: path) else {
                    throw StrataError(.storeOpen, "store \(path) does not exist and cannot be created read-only")
                }
                do {
                    database = try DatabasePool(path: path, configuration: configuration)
                } catch {
                    database = try DatabaseQueue(path: path, configuration: configuration)
                }
            } else {
                let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
                do {
                    try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
                } catch {
                    throw StrataError(.storeOpen, "store \(path): cannot create directory \(directory.path): \(error.localizedDescription)")
                }
                // Through the VFS that writes a commit's log frames at once.
                database = try DatabasePool(path: SQLiteWALBuffer.uri(forPath: path), configuration: configuration)
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw openError(error, path: path)
        }

        do {
            // A writable store probes on its writer connection: reader
            // connections open only after a migration, so none of them
            // prepares statements against the schema as it was before.
            //
            // `synchronous=FULL` is set here, not when the connection is
            // prepared: GRDB turns WAL on after preparing the writer and
            // sets `synchronous=NORMAL` with it, which syncs the log only
            // at checkpoints (a commit could be lost with the machine).
            let probe = description.isReadOnly
                ? try await database.read { db in try SQLiteStoreMetadata.probe(db, path: path) }
                : try await database.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA synchronous = FULL")
                    if let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") { walMonitor.setPageSize(pageSize) }
                    return try SQLiteStoreMetadata.probe(db, path: path)
                }
            let layout: Layout
            switch probe {
            case .foreign(let tables):
                throw StrataError(.storeOpen, "store \(path) is a SQLite database but not a Strata store (no \(SQLiteStoreMetadata.tableName) table; it has \(tables.prefix(5).joined(separator: ", "))\(tables.count > 5 ? ", …" : ""))")
            case .empty where description.isReadOnly:
                throw StrataError(.storeOpen, "store \(path) is empty and opened read-only: there is no store to read")
            case .found(let stored):
                layout = try Layout(model: model, entityNames: entityNames, existingNumbers: stored.layout.entityNumbers)
                let plan = try SQLMigrationPlanner(stored: stored, target: layout.target, model: model, schema: layout.schema, description: description).plan()
                if !plan.rewritesMetadata {
                    return Opened(database: database, walMonitor: walMonitor, identifier: stored.identifier, layout: layout)
                }
                if description.isReadOnly {
                    guard !plan.changesData else {
                        let what = plan.changes.isEmpty ? "its tables must be renamed for this model" : plan.changes.joined(separator: "; ")
                        throw StrataError(.incompatibleVersionHash, "store \(path) needs a migration but is opened read-only: \(what)", details: plan.changes)
                    }
                    return Opened(database: database, walMonitor: walMonitor, identifier: stored.identifier, layout: layout)
                }
            case .empty:
                layout = try Layout(model: model, entityNames: entityNames, existingNumbers: nil)
            }
            let (identifier, final) = try await database.writeWithoutTransaction { db in
                var result: (String, Layout)?
                try db.inTransaction(.immediate) {
                    result = try Self.createOrMigrate(db, path: path, layout: layout, model: model, description: description)
                    return .commit
                }
                walMonitor.checkpointIfNeeded(db)
                guard let result else {
                    throw StrataError(.storeOpen, "store \(path): the opening transaction ended without a result")
                }
                return result
            }
            return Opened(database: database, walMonitor: walMonitor, identifier: identifier, layout: final)
        } catch {
            try? database.close()
            if let error = error as? StrataError { throw error }
            throw openError(error, path: path)
        }
    }

    /// Inside the opening write transaction: creates the schema of an empty
    /// file, or migrates the store (whatever another process did meanwhile:
    /// the layout is remade when the store's entity numbers are no longer
    /// those it was made with). Writes the metadata, entity numbers
    /// included, and answers the store's identifier and final layout.
    private static func createOrMigrate(_ db: Database, path: String, layout: Layout, model: ObjectModel, description: StoreDescription) throws -> (String, Layout) {
        switch try SQLiteStoreMetadata.probe(db, path: path) {
        case .foreign(let tables):
            throw StrataError(.storeOpen, "store \(path) is a SQLite database but not a Strata store (it has \(tables.prefix(5).joined(separator: ", ")))")
        case .empty:
            let layout = try layout.matching(nil, model: model)
            for statement in SQLiteStoreMetadata.bookkeepingStatements + layout.schema.createStatements() {
                try db.execute(sql: statement)
            }
            let insertKey = "INSERT INTO \(SQLSchema.quote(SQLiteStoreMetadata.primaryKeyTableName)) (\(SQLSchema.quote("Z_NAME")), \(SQLSchema.quote("Z_MAX"))) VALUES (?, 0)"
            for table in layout.schema.tables {
                try db.execute(sql: insertKey, arguments: [table.rootEntity])
            }
            var metadata = layout.target
            metadata.identifier = UUID().uuidString
            try metadata.write(db)
            return (metadata.identifier, layout)
        case .found(let stored):
            let layout = try layout.matching(stored.layout.entityNumbers, model: model)
            let plan = try SQLMigrationPlanner(stored: stored, target: layout.target, model: model, schema: layout.schema, description: description).plan()
            guard plan.rewritesMetadata else { return (stored.identifier, layout) }
            for step in plan.steps {
                try db.execute(sql: step.sql, arguments: StatementArguments(step.arguments.map(\.databaseValue)))
            }
            var metadata = layout.target
            metadata.identifier = stored.identifier
            try metadata.write(db)
            return (stored.identifier, layout)
        }
    }

    private static func openError(_ error: any Error, path: String) -> any Error {
        if let error = error as? StrataError { return error }
        if let error = error as? DatabaseError {
            if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                return StrataError(.storeTimeout, "store \(path) stayed locked by another connection past the busy timeout while opening: \(error.message ?? "\(error)")")
            }
            return StrataError(.storeOpen, "store \(path) could not be opened: \(error.message ?? "\(error)") (SQLite error \(error.extendedResultCode.rawValue))")
        }
        return StrataError(.storeOpen, "store \(path) could not be opened: \(error)")
    }

    // MARK: - State

    /// The connections, or 134080 once closed.
    nonisolated func openDatabase() throws -> any DatabaseWriter {
        guard let database = database.withLockedValue({ $0 }) else {
            throw StrataError(.storeOpen, "store \(path) is closed")
        }
        return database
    }

    /// Maps what GRDB and SQLite throw into ``StrataError``s: 134090 when
    /// busy past the timeout, `failure` (134080 for reads, 134030 for
    /// saves) otherwise; errors of the SQL functions keep their own code.
    nonisolated func strataError(_ error: any Error, failure: StrataError.Code, operation: String) -> any Error {
        if error is CancellationError { return error }
        if let error = SQLiteFunctions.strataError(from: error) { return error }
        if let error = error as? DatabaseError {
            if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                return StrataError(.storeTimeout, "store \(path): \(operation) waited past the busy timeout (\(storeDescription.busyTimeout)) for another connection's lock: \(error.message ?? "\(error)")")
            }
            if failure == .storeOpen, Self.requestAtFault(error) {
                // Not the store's state but the request's size (expression
                // depth, bound values, statement length): retrying cannot
                // help, so it is not 134080.
                return StrataError(.unsupported, "store \(path): \(operation) is beyond SQLite's limits: \(error.message ?? "\(error)") (SQLite error \(error.extendedResultCode.rawValue))")
            }
            return StrataError(failure, "store \(path): \(operation) failed: \(error.message ?? "\(error)") (SQLite error \(error.extendedResultCode.rawValue))")
        }
        return StrataError(failure, "store \(path): \(operation) failed: \(error)")
    }

    /// Whether SQLite refused a read for the size of what the request asked
    /// (`SQLITE_TOOBIG`, `SQLITE_RANGE`, or while preparing a compiled
    /// query: an expression too deep, too many variables, terms or
    /// arguments) rather than for the store's state. Other errors ("no such
    /// table" after another process changed the file…) stay 134080.
    static func requestAtFault(_ error: DatabaseError) -> Bool {
        if error.resultCode == .SQLITE_TOOBIG || error.resultCode == .SQLITE_RANGE { return true }
        guard error.resultCode == .SQLITE_ERROR, let message = error.message?.lowercased() else { return false }
        return ["expression tree is too large", "too many sql variables", "too many terms", "too many arguments",
                "parser stack overflow", "string or blob too big"].contains { message.contains($0) }
    }

    /// Closes the connections (SQLite checkpoints the WAL into the file).
    /// Later calls fail with 134080; closing again does nothing.
    public func close() async throws {
        // No save is accepted from now on; those already accepted are
        // written (and answered) first.
        let open = self.database.withLockedValue { database in
            defer { database = nil }
            return database
        }
        guard let database = open else { return }
        inlineReaders.close()
        saveQueue.close()
        await saveQueue.waitUntilIdle()
        // Every save into the file, and the log emptied, so that the
        // .sqlite file alone holds everything (a copy of it is a backup).
        // Another process still reading keeps part of the log: harmless.
        if !storeDescription.isReadOnly {
            _ = try? database.writeWithoutTransaction { db in
                try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        do {
            try database.close()
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "close")
        }
    }
}
