import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import PostgresNIO
import StrataModel
import StrataQuery
import StrataStore

/// A persistent store in a schema of a PostgreSQL database, through
/// postgres-nio, with the semantics of the SQLite store: the same layout
/// (``PostgresSchema``), the same values, the same fetch results in the
/// same order, all-or-nothing saves with optimistic locking and uniqueness
/// conflicts, keys allocated in the write transaction.
///
/// - The description's URL is a ``PostgresStoreURL``
///   (`postgresql://USER@HOST[:PORT]/DB?schema=…`); the store keeps a pool
///   of its `pool` connections.
/// - Opening connects once first (a wrong address, password or
///   certificate fails at once with 134080), then creates or checks the
///   schema under an advisory lock (``PostgresStoreOpening``): any number
///   of servers may open one store at the same time. A model that does not
///   match the store's is refused with 134100 listing what differs. A
///   read-only store never creates anything.
/// - Saves run in one `READ COMMITTED` transaction each, and lock what
///   they check (``PostgresSaveTransaction``): two servers saving the same
///   objects at once get the same conflicts one server would give. A save
///   that meets a deadlock or a serialization failure is run again, up to
///   three times.
/// - Reads run on any pooled connection; a read that needs two statements
///   (rows whose to-one destinations' entities must be looked up) runs
///   them in one `REPEATABLE READ` transaction.
///
/// - Every committed save is recorded in the store's persistent history
///   (``PostgresHistory``, whatever ``StoreDescription/tracksHistory``
///   says: other servers learn of saves only through it) and announced on
///   the store's channel; ``externalChanges(after:pollInterval:)`` follows
///   the other servers' saves (``PostgresChangeWatcher``).
///
/// Strings holding U+0000 are refused (``StrataError/Code/invalidValue``):
/// PostgreSQL's `text` cannot hold them. Errors name the store as
/// ``PostgresStoreURL/displayName`` does (schema, host, port and database:
/// never a password or a file path) and carry PostgreSQL's message and
/// SQLSTATE, never the statement.
public actor PostgresStore: PersistentStore {
    /// The store's UUID, recorded in its metadata when it was created.
    public nonisolated let identifier: String
    /// How the store was opened.
    public nonisolated let storeDescription: StoreDescription
    /// The model the store serves.
    public nonisolated let model: ObjectModel
    /// The entities the store holds.
    public nonisolated let entityNames: Set<String>
    /// Where the store is.
    public nonisolated let location: PostgresStoreURL

    nonisolated let mapping: PostgresStoreMapping
    nonisolated let decoder: PostgresRowDecoder
    nonisolated let logger: Logger
    /// The store, for messages: `PostgreSQL store schema@host:port/database`
    /// (no file paths: messages reach clients).
    nonisolated let place: String
    /// The pool; nil once closed.
    private nonisolated let pool = NIOLockedValueBox<PostgresClient?>(nil)
    /// The task running the pool.
    private var running: Task<Void, Never>?
    /// Saves waiting for the next group commit (``save(_:)``).
    var pendingSaves: [PendingSave] = []
    /// Whether a group is being written.
    var isCommitting = false
    /// How change watchers connect (outside the pool).
    nonisolated let watcherConfiguration: PostgresConnection.Configuration
    /// Identifies this open instance in the history it writes.
    public nonisolated let historyOrigin: String = UUID().uuidString

    /// Opens the store `description.url` names, creating its schema and
    /// tables when missing (unless read-only).
    public init(description: StoreDescription, model: ObjectModel, logger: Logger = Logger(label: "strata.postgres")) async throws {
        guard let url = description.url else {
            throw StrataError(.storeOpen, "store \(description.displayName): a PostgreSQL store needs a postgresql:// URL")
        }
        try StoreOpening.checkConfiguration(description, model: model)
        let location = try PostgresStoreURL(url.absoluteString)
        let password = try location.password()
        try await location.probe(password: password, logger: logger)
        let watcherConfiguration = try location.connectionConfiguration(password: password, applicationName: "strata-watcher")
        let place = "PostgreSQL store \(location.displayName)"
        // The schema is opened on a connection of its own (the pool is not
        // running yet), closed afterwards.
        let opened: PostgresStoreOpening.Opened
        do {
            let connection = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(),
                                                                  configuration: try location.connectionConfiguration(password: password),
                                                                  id: 0, logger: logger)
            do {
                opened = try await PostgresStoreOpening.open(connection: connection, schemaName: location.schema, model: model, configuration: description.configuration,
                                                             readOnly: description.isReadOnly, migratesAutomatically: description.migratesAutomatically, logger: logger)
            } catch {
                try? await connection.close()
                throw error
            }
            try? await connection.close()
        } catch {
            throw PostgresErrors.strataError(error, failure: .storeOpen, doing: "opening \(place)")
        }
        let client = PostgresClient(configuration: try location.clientConfiguration(password: password, lockTimeout: description.busyTimeout), backgroundLogger: logger)
        let running = Task { await client.run() }
        let mapping = PostgresStoreMapping(postgres: opened.schema)
        self.identifier = opened.identifier
        self.storeDescription = description
        self.model = model
        self.entityNames = StoreOpening.entityNames(configuration: description.configuration, model: model)
        self.location = location
        self.mapping = mapping
        self.decoder = PostgresRowDecoder(mapping: mapping, storeIdentifier: opened.identifier, place: place)
        self.logger = logger
        self.place = place
        self.pool.withLockedValue { $0 = client }
        self.running = running
        self.watcherConfiguration = watcherConfiguration
    }

    /// The pool, or 134080 once the store is closed.
    nonisolated func client() throws(StrataError) -> PostgresClient {
        guard let client = pool.withLockedValue({ $0 }) else {
            throw StrataError(.storeOpen, "\(place) is closed")
        }
        return client
    }

    /// Closes the pool's connections; later calls fail with 134080.
    public func close() async throws {
        pool.withLockedValue { $0 = nil }
        running?.cancel()
        await running?.value
        running = nil
    }

    /// Whether the database answers now (a `SELECT 1` on a pooled
    /// connection, within `timeout`): for readiness checks.
    public nonisolated func isReachable(timeout: Duration = .seconds(2)) async -> Bool {
        guard let client = try? client() else { return false }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await client.query("SELECT 1")
                    return true
                } catch {
                    return false
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// The table of the fetched entity, or ``StrataError/Code/invalidValue``
    /// when the store does not hold it.
    nonisolated func heldTable(of fetch: ResolvedFetch) throws(StrataError) -> String {
        guard let table = mapping.schema.table(for: fetch.entityName)?.name else {
            throw StrataError(.invalidValue, "\(place) does not hold entity '\(fetch.entityName)'")
        }
        return table
    }

    /// `error` as a ``StrataError`` saying what failed.
    nonisolated func strataError(_ error: any Error, failure: StrataError.Code, operation: String) -> StrataError {
        PostgresErrors.strataError(error, failure: failure, doing: "\(place): \(operation)")
    }
}

extension StoreFactory {
    /// This factory, also opening PostgreSQL stores (``PostgresStore``).
    public func addingPostgres(logger: Logger = Logger(label: "strata.postgres")) -> StoreFactory {
        adding(.postgres) { description, model in try await PostgresStore(description: description, model: model, logger: logger) }
    }
}
