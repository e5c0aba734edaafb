#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GRDB
import StrataModel
import StrataStore
import StrataQuery

/// Puts a backup (``BackupCapableStore/backup(to:)``, `strata backup`) in
/// a store file's place, offline: `strata-server restore`.
///
/// - The backup is checked first: a SQLite file that passes
///   `PRAGMA integrity_check` and has Strata's metadata, or a binary store
///   file whose header and checksums hold; a backup of another store (its
///   identifier differs from the file it replaces) is refused unless
///   `replacingAnotherStore`.
/// - A store file in use is refused: a SQLite file that some connection,
///   in any process, has open in WAL mode (its `-shm` lock), a binary store
///   whose lock is held; a probe that cannot tell is a refusal too.
/// - A SQLite store being replaced is checkpointed first (its `-wal` folded
///   into the file), and the copy takes its key counters past the replaced
///   store's: object IDs handed out after the backup are never handed out
///   again. The copy's history records the restore as one transaction and
///   everything before it as purged, so every consumer's token fails with
///   134301 (fetch again) instead of silently skipping what the restore
///   undid.
/// - The store's current files are kept, renamed with a
///   `.replaced-TIMESTAMP-RANDOM` suffix (never over an existing file); the
///   copy, with the replaced file's owner and permissions, is synced and
///   renamed into place, and the folder synced. A failure before that last
///   rename puts the kept files back.
public enum StoreRestore {
    /// What ``restore(from:to:replacingAnotherStore:)`` did.
    public struct Outcome: Sendable, Hashable {
        /// The kind of store restored.
        public var format: StoreDescription.StoreType
        /// The files the store had before, under their new names.
        public var keptFiles: [String]
        /// The restored store's history token after the restore (SQLite
        /// stores that record history; 0 otherwise).
        public var historyToken: Int64
    }

    /// Restores `backup` to the store file at `target`. Fails with 134080
    /// naming the file at fault: a backup that is not a sound Strata store
    /// file, a target of another kind, of another store or in use, a file
    /// that cannot be written.
    public static func restore(from backup: URL, to target: URL, replacingAnotherStore: Bool = false) throws(StrataError) -> Outcome {
        let source = backup.path
        let path = target.path
        guard let format = kind(of: source) else {
            throw StrataError(.storeOpen, "\(source) is not a Strata store backup (neither a SQLite nor a binary store file)")
        }
        let identifier = try check(source, format: format)
        let fileManager = FileManager.default
        let replacing = fileManager.fileExists(atPath: path)
        if replacing {
            guard let existing = kind(of: path) else {
                throw StrataError(.storeOpen, "\(path) is not a Strata store file: nothing was replaced")
            }
            guard existing == format else {
                throw StrataError(.storeOpen, "\(path) is a \(existing.rawValue) store and \(source) a \(format.rawValue) one: nothing was replaced")
            }
            let current = try storeIdentifier(of: path, format: format)
            guard current == identifier || replacingAnotherStore else {
                throw StrataError(.storeOpen, "\(source) is a backup of store \(identifier), and \(path) is store \(current): nothing was replaced (restore it anyway with --force)")
            }
        }
        // Nobody may have the store open while it is replaced.
        var lock: StoreFileLock?
        var replaced = Counters()
        if format == .binary {
            lock = try StoreFileLock(storePath: path, exclusive: true, displayName: path)
        } else {
            try refuseIfInUse(path)
            if replacing { replaced = try checkpointAndReadCounters(path) }
        }
        defer { lock?.release() }

        let staged = path + ".restoring"
        try copyDurably(from: source, to: staged, likeFile: replacing ? path : nil)
        var token: Int64 = 0
        if format == .sqlite {
            do {
                token = try advance(staged, past: replaced)
                // Again, just before the files move: a server may have started.
                try refuseIfInUse(path)
            } catch {
                unlink(staged)
                throw error
            }
        }
        let suffix = ".replaced-\(timestamp())-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        var kept: [(original: String, aside: String)] = []
        func putBack() {
            for move in kept.reversed() { _ = rename(move.aside, move.original) }
        }
        // The log and index first, the file last: until the file moves,
        // the store is whole where it was.
        for extra in ["-wal", "-shm", "-journal", ""] where fileManager.fileExists(atPath: path + extra) {
            let aside = path + suffix + extra
            guard !fileManager.fileExists(atPath: aside), rename(path + extra, aside) == 0 else {
                let code = errno
                putBack()
                unlink(staged)
                throw StrataError(.storeOpen, "cannot move \(path + extra) aside: \(PosixError.describe(code)): nothing was replaced")
            }
            kept.append((path + extra, aside))
        }
        guard rename(staged, path) == 0 else {
            let code = errno
            putBack()
            unlink(staged)
            throw StrataError(.storeOpen, "cannot rename the restored copy to \(path): \(PosixError.describe(code)): nothing was replaced")
        }
        StoreFile.syncDirectory(of: path)
        return Outcome(format: format, keptFiles: kept.map(\.aside), historyToken: token)
    }

    /// What a replaced SQLite store had handed out: its key counters and
    /// its newest history token.
    struct Counters {
        var keys: [String: Int64] = [:]
        var historyToken: Int64 = 0
    }

    /// Folds the replaced store's `-wal` into its file (so that the files
    /// kept aside are one whole store) and reads its counters.
    private static func checkpointAndReadCounters(_ path: String) throws(StrataError) -> Counters {
        do {
            let database = try DatabaseQueue(path: path)
            defer { try? database.close() }
            return try database.writeWithoutTransaction { db in
                _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                var counters = Counters()
                if try db.tableExists(SQLiteStoreMetadata.primaryKeyTableName) {
                    for row in try Row.fetchAll(db, sql: "SELECT \"Z_NAME\", \"Z_MAX\" FROM \(SQLSchema.quote(SQLiteStoreMetadata.primaryKeyTableName))") {
                        counters.keys[row[0]] = row[1]
                    }
                }
                counters.historyToken = try SQLiteHistory.currentToken(db)
                return counters
            }
        } catch {
            throw StrataError(.storeOpen, "\(path) cannot be read before it is replaced: \(error): nothing was replaced")
        }
    }

    /// In the staged copy: key counters past the replaced store's, and a
    /// history that starts again after a restore transaction, everything
    /// before it purged. Returns the restore's token (0 without history).
    private static func advance(_ staged: String, past replaced: Counters) throws(StrataError) -> Int64 {
        do {
            let database = try DatabaseQueue(path: staged)
            defer { try? database.close() }
            return try database.write { db in
                let table = SQLSchema.quote(SQLiteStoreMetadata.primaryKeyTableName)
                for (name, maximum) in replaced.keys {
                    try db.execute(sql: "INSERT INTO \(table) (\"Z_NAME\", \"Z_MAX\") VALUES (?, ?) ON CONFLICT (\"Z_NAME\") DO UPDATE SET \"Z_MAX\" = MAX(\"Z_MAX\", excluded.\"Z_MAX\")", arguments: [name, maximum])
                }
                guard try SQLiteHistory.exists(db) else { return 0 }
                let token = max(replaced.historyToken, try SQLiteHistory.currentToken(db)) + 1
                try SQLiteHistory.recordRestore(db, token: token)
                return token
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw StrataError(.storeOpen, "the restored copy of \(staged) cannot be prepared: \(error): nothing was replaced")
        }
    }

    /// Refuses a SQLite file that a connection may have open (see
    /// ``sqliteInUse(_:)``).
    private static func refuseIfInUse(_ path: String) throws(StrataError) {
        switch sqliteInUse(path) {
        case .success(false): return
        case .success(true):
            throw StrataError(.storeOpen, "\(path) is open in another process (stop the server first): nothing was replaced")
        case .failure(let message):
            throw StrataError(.storeOpen, "cannot tell whether \(path) is open (\(message)): nothing was replaced")
        }
    }

    /// The identifier of the store in the file at `path`.
    private static func storeIdentifier(of path: String, format: StoreDescription.StoreType) throws(StrataError) -> String {
        if format == .binary {
            return try BinaryStore.identifier(ofFileAt: path)
        }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let database = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? database.close() }
            return try database.read { db in
                try String.fetchOne(db, sql: "SELECT \"Z_VALUE\" FROM \(SQLSchema.quote(SQLiteStoreMetadata.tableName)) WHERE \"Z_KEY\" = 'identifier'") ?? ""
            }
        } catch {
            throw StrataError(.storeOpen, "\(path) cannot be read as a SQLite store: \(error)")
        }
    }

    /// The kind of store file at `path` by its first bytes, nil when it is
    /// neither (or cannot be read).
    static func kind(of path: String) -> StoreDescription.StoreType? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 16)) ?? Data())
        if head == Array("SQLite format 3\0".utf8) { return .sqlite }
        if head.starts(with: BinaryStoreFormat.magic) { return .binary }
        return nil
    }

    /// Checks a backup file before it replaces anything; returns the
    /// identifier of the store it copies.
    private static func check(_ path: String, format: StoreDescription.StoreType) throws(StrataError) -> String {
        if format == .binary {
            return try storeIdentifier(of: path, format: format)
        }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let database = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? database.close() }
            try database.read { db in
                let check = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard check == ["ok"] else {
                    throw StrataError(.storeOpen, "\(path) fails SQLite's integrity check: \(check.prefix(3).joined(separator: "; "))")
                }
                guard try db.tableExists(SQLiteStoreMetadata.tableName) else {
                    throw StrataError(.storeOpen, "\(path) is a SQLite database but not a Strata store (no \(SQLiteStoreMetadata.tableName) table)")
                }
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw StrataError(.storeOpen, "\(path) cannot be read as a SQLite store: \(error)")
        }
        return try storeIdentifier(of: path, format: format)
    }

    /// Whether some connection, in any process, has the SQLite file at
    /// `path` open in WAL mode: each holds a shared `fcntl` lock on the
    /// "DMS" byte (offset 128) of the `-shm` file while it is open. On Linux
    /// the probe is an open-file-description query (`F_OFD_GETLK`), which
    /// also sees the locks of this process's own connections (`F_GETLK`
    /// reports only other processes'). A failure to probe (other than no
    /// `-shm` file: nobody has the store open in WAL mode) is its message.
    static func sqliteInUse(_ path: String) -> Result<Bool, Failure> {
        let fd = open(path + "-shm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            return code == ENOENT ? .success(false) : .failure(Failure(message: "\(path)-shm: \(PosixError.describe(code))"))
        }
        defer { close(fd) }
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 128
        probe.l_len = 1
        probe.l_pid = 0
        #if os(Linux)
        let query: Int32 = 36  // F_OFD_GETLK (<fcntl.h>, Linux 3.15+)
        #else
        let query = F_GETLK
        #endif
        guard fcntl(fd, query, &probe) == 0 else {
            return .failure(Failure(message: "\(path)-shm: lock probe: \(PosixError.describe(errno))"))
        }
        return .success(probe.l_type != Int16(F_UNLCK))
    }

    /// Why a probe could not tell.
    struct Failure: Error {
        var message: String
    }

    /// Copies `source` to a new file `destination`, synced: owner-only, or
    /// with the owner and permissions of `likeFile` (the file it replaces).
    private static func copyDurably(from source: String, to destination: String, likeFile: String?) throws(StrataError) {
        unlink(destination)
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw StrataError(.storeOpen, "cannot read \(source): \(PosixError.describe(errno))") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw StrataError(.storeOpen, "cannot create \(destination): \(PosixError.describe(errno))") }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        func fail(_ step: String, _ code: Int32) -> StrataError {
            close(output)
            unlink(destination)
            return StrataError(.storeOpen, "cannot \(step) \(destination): \(PosixError.describe(code)); nothing was replaced")
        }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw fail("copy into", errno)
            }
            if count == 0 { break }
            var written = 0
            while written < count {
                let n = buffer.withUnsafeBytes { write(output, $0.baseAddress.map { $0 + written }, count - written) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw fail("write", errno)
                }
                written += n
            }
        }
        if let likeFile {
            var original = stat()
            if stat(likeFile, &original) == 0 {
                _ = fchmod(output, original.st_mode & 0o7777)
                // Only root may give a file away; otherwise it stays ours.
                _ = fchown(output, original.st_uid, original.st_gid)
            }
        }
        guard fsync(output) == 0 else { throw fail("sync", errno) }
        close(output)
    }

    private static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: Date())
    }
}
