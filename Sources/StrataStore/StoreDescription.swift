import Foundation

/// How to open one store: where, what kind, which configuration, and how.
public struct StoreDescription: Sendable, Hashable {
    /// The kinds of store Strata ships.
    public enum StoreType: String, Sendable, Hashable, CaseIterable {
        /// SQLite in WAL mode, through GRDB (StrataSQLite).
        case sqlite
        /// Everything in memory; nothing on disk.
        case inMemory = "memory"
        /// The whole store in one file, rewritten atomically at each save.
        case binary
        /// A store served by a `strata-server`, reached through a client
        /// (StrataClient's `RemoteContainer` opens these).
        case remote
        /// A schema of a PostgreSQL database, through postgres-nio
        /// (StrataPostgres); the URL is `postgresql://USER@HOST[:PORT]/DB?schema=…`.
        case postgres
    }

    /// The store's file (ignored for in-memory stores).
    public var url: URL?
    /// The kind of store.
    public var type: StoreType
    /// The model configuration the store holds; `nil` holds every entity
    /// (allowed only when it is the coordinator's only store).
    public var configuration: String?
    /// Refuse every write; the file's bytes never change.
    public var isReadOnly: Bool
    /// Migrate lightweight changes (added entity, added optional or
    /// defaulted attribute, added index) in place when opening.
    public var migratesAutomatically: Bool
    /// How long a SQLite writer waits for another process's lock.
    public var busyTimeout: Duration
    /// Whether saves record persistent history (SQLite stores; see
    /// ``HistoryTrackingStore``). A store whose file already records history
    /// keeps recording whatever this says, so that no process's save is
    /// missing from it. Other processes notice this process's saves only
    /// through history. On by default; turn it off only for a store no other
    /// process shares.
    public var tracksHistory: Bool
    /// The page cache of each SQLite connection, in bytes (0: SQLite's own
    /// default, 2 MB). Indexes that outgrow the cache are read back from
    /// the file page by page: at 2 MB, inserting 100k rows with three
    /// indexes spends about as long in those reads as in everything else.
    /// Allocated only as pages are used; a store has one writer, up to
    /// five pooled reader connections and up to four (one per core) that
    /// read on the caller's thread.
    public var pageCacheBytes: Int
    /// How large (in bytes) a SQLite store's write-ahead log grows before
    /// the store copies it into the database file: a passive checkpoint,
    /// run on the writer between commit groups, after the saves that took
    /// it there are answered. Every commit writes each page it changed to
    /// the log; a checkpoint writes each page changed since the last one
    /// once, and syncs the file: the more commits between checkpoints, the
    /// fewer times a page changed often (an index leaf) is written, and
    /// the longer saves queued behind one checkpoint wait. The log file
    /// keeps the largest size it reached (a reader that keeps the log from
    /// being reused lets it grow past this); a crash replays the log.
    /// Counted in pages of the file's own size (at least one).
    public var walCheckpointBytes: Int
    /// The page size, in bytes, of a SQLite store's file when this opening
    /// creates it: a power of two from 512 to 65,536; nil for SQLite's
    /// 4,096. A file that exists keeps the size it was made with.
    ///
    /// Every commit writes each page it changed to the write-ahead log, so
    /// a save that touches a few rows in several indexes writes several
    /// whole pages. Smaller pages write less for the same change: with
    /// 1,024-byte pages the server's durable single-book inserts took
    /// about 6% less CPU each and answered about 10% more per second than
    /// with 4,096, and their p99 latency fell by two thirds, mostly because
    /// the log reaches ``walCheckpointBytes`` four times more slowly (a
    /// larger threshold does that with any page size). Larger transactions
    /// and scans pay for it: 100,000 inserts in one save took about 17%
    /// longer and reading them back 20% longer, and an indexed query of 20
    /// rows about 2% more CPU. An index record (its key, rowid and header)
    /// longer than about a quarter of a page (230 bytes at 1,024) spills to
    /// overflow pages. A store restored from a backup has the backup's page
    /// size.
    public var pageSize: Int?

    /// The default page cache: 32 MiB per connection.
    public static let defaultPageCacheBytes = 32 * 1024 * 1024
    /// The default checkpoint threshold: 40 MiB of log (10,240 pages of 4
    /// KiB; SQLite's own automatic checkpoint runs at 1,000 pages).
    public static let defaultWALCheckpointBytes = 40 * 1024 * 1024
    /// The page sizes ``pageSize`` may take: SQLite's powers of two.
    public static let pageSizes: [Int] = (9...16).map { 1 << $0 }

    /// Creates a description.
    public init(
        url: URL?,
        type: StoreType,
        configuration: String? = nil,
        isReadOnly: Bool = false,
        migratesAutomatically: Bool = true,
        busyTimeout: Duration = .seconds(5),
        tracksHistory: Bool = true,
        pageCacheBytes: Int = StoreDescription.defaultPageCacheBytes,
        walCheckpointBytes: Int = StoreDescription.defaultWALCheckpointBytes,
        pageSize: Int? = nil
    ) {
        self.url = url
        self.type = type
        self.configuration = configuration
        self.isReadOnly = isReadOnly
        self.migratesAutomatically = migratesAutomatically
        self.busyTimeout = busyTimeout
        self.tracksHistory = tracksHistory
        self.pageCacheBytes = pageCacheBytes
        self.walCheckpointBytes = walCheckpointBytes
        self.pageSize = pageSize
    }

    /// An in-memory store for a configuration.
    public static func inMemory(configuration: String? = nil) -> StoreDescription {
        StoreDescription(url: nil, type: .inMemory, configuration: configuration)
    }

    /// A name for messages: the file path, the database as
    /// `postgresql://HOST:PORT/DATABASE?schema=NAME` (no user, password or
    /// file path), or `memory` with the configuration.
    public var displayName: String {
        if type == .postgres, let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.user = nil
            components.password = nil
            components.queryItems = components.queryItems?.filter { $0.name == "schema" }
            if components.queryItems?.isEmpty == true { components.queryItems = nil }
            components.fragment = nil
            return components.string ?? "postgresql database"
        }
        if let url { return url.path }
        return "memory:\(configuration ?? "default")"
    }
}
