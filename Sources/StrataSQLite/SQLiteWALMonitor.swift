import GRDB
import GRDBSQLite
import StrataStore
import Synchronization

/// How many frames a store's write-ahead log holds after its writer's last
/// commit, as SQLite's WAL hook reports it, so that the store checkpoints
/// after answering its saves instead of inside a commit.
///
/// SQLite's automatic checkpoint is itself a WAL hook: it copies the log
/// into the database file (and syncs it) within the `COMMIT` that takes
/// the log past 1000 frames, so that save waits for a checkpoint that has
/// nothing to do with its durability. The store's threshold is its
/// description's ``StoreDescription/walCheckpointBytes`` (40 MiB by
/// default, ten times SQLite's: a busy store's index leaves change in many
/// commits between two checkpoints and are copied once). Installing this hook on the writer
/// connection replaces it; ``SQLiteStore`` runs the same passive
/// checkpoint on the writer once the saves of the group are answered, and
/// after its other writes (history bookkeeping, opening migrations) within
/// them, as SQLite would.
final class SQLiteWALMonitor: Sendable {
    /// The log's size in bytes past which the store checkpoints
    /// (``StoreDescription/walCheckpointBytes``).
    let checkpointBytes: Int
    /// That size in frames of the file's pages (``setPageSize(_:)``;
    /// 4 KiB pages until then).
    private let frameLimit: Atomic<Int>

    /// A monitor that checkpoints once the log holds `checkpointBytes`.
    init(checkpointBytes: Int = StoreDescription.defaultWALCheckpointBytes) {
        self.checkpointBytes = checkpointBytes
        frameLimit = Atomic(Self.frames(checkpointBytes, pageSize: 4096))
    }

    /// Frames in the log past which the store checkpoints.
    var checkpointFrames: Int { frameLimit.load(ordering: .relaxed) }

    /// Counts ``checkpointBytes`` in pages of `pageSize` bytes (the file's).
    func setPageSize(_ pageSize: Int) {
        frameLimit.store(Self.frames(checkpointBytes, pageSize: pageSize), ordering: .relaxed)
    }

    private static func frames(_ bytes: Int, pageSize: Int) -> Int {
        max(1, bytes / max(512, pageSize))
    }

    private let frames = Atomic<Int>(0)
    private let checkpoints = Atomic<Int>(0)

    /// Whether the log has grown past ``checkpointFrames`` since the last checkpoint.
    var needsCheckpoint: Bool { frames.load(ordering: .relaxed) >= frameLimit.load(ordering: .relaxed) }

    /// How many checkpoints ``checkpointIfNeeded(_:)`` ran.
    var checkpointCount: Int { checkpoints.load(ordering: .relaxed) }

    /// On the writer connection, between transactions (true when it ran): a passive
    /// checkpoint (it never waits for readers; what it cannot copy now a
    /// later one copies) when the log has passed ``checkpointFrames``. Its
    /// failure only leaves the log longer. The next commit reports the
    /// log's size again (a log that readers kept from being reset is
    /// checkpointed again after that commit, as SQLite's automatic
    /// checkpoint does).
    @discardableResult
    func checkpointIfNeeded(_ db: Database) -> Bool {
        guard needsCheckpoint else { return false }
        _ = try? db.checkpoint(.passive)
        // On the writer, so no commit's report comes in between.
        frames.store(0, ordering: .relaxed)
        checkpoints.add(1, ordering: .relaxed)
        return true
    }

    /// Installs the hook on the writer connection. The hook holds this
    /// monitor unretained: the store keeps it (and the connection's
    /// configuration captures it) for as long as the connection is open.
    func install(on connection: OpaquePointer) {
        sqlite3_wal_hook(connection, { context, _, _, frames in
            if let context {
                Unmanaged<SQLiteWALMonitor>.fromOpaque(context).takeUnretainedValue().frames.store(Int(frames), ordering: .relaxed)
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }
}
