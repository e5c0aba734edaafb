#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GRDB
import StrataModel

/// Puts a backup (``BackupCapableStore/backup(to:)``, `strata backup`) in
/// a store file's place, offline: `strata-server restore`.
///
/// The backup is checked first (a SQLite file that passes
/// `PRAGMA integrity_check` and has Strata's metadata, or a binary store
/// file whose header and checksums hold); a store file in use by any
/// process (a SQLite file some connection has open in WAL mode, a binary
/// store whose lock is held) is refused. The store's current files are
/// kept, renamed with a `.replaced-TIMESTAMP` suffix, and the backup is
/// copied in (synced, renamed into place): nothing is deleted, and a
/// failure leaves the store as it was.
public enum StoreRestore {
    /// What ``restore(from:to:)`` did.
    public struct Outcome: Sendable, Hashable {
        /// The kind of store restored.
        public var format: StoreDescription.StoreType
        /// The files the store had before, under their new names.
        public var keptFiles: [String]
    }

    /// Restores `backup` to the store file at `target`. Fails with 134080
    /// naming the file at fault: a backup that is not a sound Strata store
    /// file, a target of another kind or in use, a file that cannot be
    /// written.
    public static func restore(from backup: URL, to target: URL) throws(StrataError) -> Outcome {
        let source = backup.path
        let path = target.path
        guard let format = kind(of: source) else {
            throw StrataError(.storeOpen, "\(source) is not a Strata store backup (neither a SQLite nor a binary store file)")
        }
        try check(source, format: format)
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: path) {
            guard let existing = kind(of: path) else {
                throw StrataError(.storeOpen, "\(path) is not a Strata store file: nothing was replaced")
            }
            guard existing == format else {
                throw StrataError(.storeOpen, "\(path) is a \(existing.rawValue) store and \(source) a \(format.rawValue) one: nothing was replaced")
            }
        }
        // Nobody may have the store open while it is replaced.
        var lock: StoreFileLock?
        if format == .binary {
            lock = try StoreFileLock(storePath: path, exclusive: true, displayName: path)
        } else if sqliteInUse(path) {
            throw StrataError(.storeOpen, "\(path) is open in another process (stop the server first): nothing was replaced")
        }
        defer { lock?.release() }

        let staged = path + ".restoring"
        try copyDurably(from: source, to: staged)
        let stamp = timestamp()
        var kept: [String] = []
        for suffix in ["", "-wal", "-shm", "-journal"] where fileManager.fileExists(atPath: path + suffix) {
            let aside = "\(path).replaced-\(stamp)\(suffix)"
            guard rename(path + suffix, aside) == 0 else {
                let code = errno
                // Put back what was moved: the store stays as it was.
                for (original, moved) in kept.map({ ($0.replacingOccurrences(of: ".replaced-\(stamp)", with: ""), $0) }) {
                    _ = rename(moved, original)
                }
                unlink(staged)
                throw StrataError(.storeOpen, "cannot move \(path + suffix) aside: \(PosixError.describe(code)): nothing was replaced")
            }
            kept.append(aside)
        }
        guard rename(staged, path) == 0 else {
            let code = errno
            unlink(staged)
            throw StrataError(.storeOpen, "cannot rename the restored copy to \(path): \(PosixError.describe(code)); the old files are kept as \(kept.joined(separator: ", "))")
        }
        return Outcome(format: format, keptFiles: kept)
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

    /// Checks a backup file before it replaces anything.
    private static func check(_ path: String, format: StoreDescription.StoreType) throws(StrataError) {
        if format == .binary {
            guard let bytes = try StoreFile.load(path, displayName: path) else {
                throw StrataError(.storeOpen, "\(path) cannot be read")
            }
            do {
                var decoder = try BinaryStoreDecoder(bytes)
                try decoder.readSchema()
            } catch {
                throw StrataError(.storeOpen, "\(path): corrupt at byte offset \(error.offset): \(error.reason)")
            }
            return
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
    }

    /// Whether some connection, in any process, has the SQLite file at
    /// `path` open in WAL mode: each holds a shared `fcntl` lock on the
    /// "DMS" byte (offset 128) of the `-shm` file while it is open. On Linux
    /// the probe is an open-file-description query (`F_OFD_GETLK`), which
    /// also sees the locks of this process's own connections (`F_GETLK`
    /// reports only other processes').
    static func sqliteInUse(_ path: String) -> Bool {
        let fd = open(path + "-shm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 128
        probe.l_len = 1
        probe.l_pid = 0
        #if os(Linux)
        let query: Int32 = 36  // F_OFD_GETLK (<fcntl.h>, Linux 3.15+)
        if fcntl(fd, query, &probe) != 0 {
            probe.l_type = Int16(F_WRLCK)
            guard fcntl(fd, F_GETLK, &probe) == 0 else { return false }
        }
        #else
        guard fcntl(fd, F_GETLK, &probe) == 0 else { return false }
        #endif
        return probe.l_type != Int16(F_UNLCK)
    }

    /// Copies `source` to a new file `destination` (owner-only), synced.
    private static func copyDurably(from source: String, to destination: String) throws(StrataError) {
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
