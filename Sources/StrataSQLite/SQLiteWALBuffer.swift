import CStrataSQLite
import GRDBSQLite

/// The VFS through which the SQLite store opens its writable files, which
/// writes each commit's write-ahead-log frames with one system call instead
/// of two per frame (`Sources/CStrataSQLite`).
///
/// SQLite writes a WAL frame as its 24-byte header and then its page, each
/// with its own `pwrite`. An insert into a table with three indexes dirties
/// about three pages, so a commit group of twenty inserts made about 120
/// calls. The VFS gathers a write transaction's appends to the log in one
/// buffer per log file (1 MiB, allocated on the first write) and writes it
/// once the commit frame is in, before SQLite syncs the log or lets any
/// connection see the new frames, so a commit is as durable and as visible
/// as without it; a gathered write that fails loses the whole transaction
/// (see `Sources/CStrataSQLite/include/CStrataSQLite.h`).
enum SQLiteWALBuffer {
    /// Whether the VFS is registered with SQLite (once per process; false
    /// only if SQLite refused it, in which case stores use SQLite's default
    /// VFS, which is correct, only slower).
    static let isAvailable: Bool = strata_sqlite_register_wal_buffer_vfs() == 0

    /// The name SQLite knows the VFS by.
    static let vfsName = STRATA_WAL_BUFFER_VFS_NAME

    /// The file name to hand SQLite for `path` so that it opens it through
    /// the VFS: a `file:` URI (SQLite is built to accept them) with the
    /// characters URIs reserve escaped; `path` itself when the VFS is not
    /// available.
    static func uri(forPath path: String) -> String {
        guard isAvailable else { return path }
        var escaped = ""
        escaped.reserveCapacity(path.utf8.count + 32)
        for character in path.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3F"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(character)
            }
        }
        // An absolute path gets an empty authority ("file:///…"), so that
        // one starting with "//" is not read as a host.
        return (path.hasPrefix("/") ? "file://" : "file:") + escaped + "?vfs=" + vfsName
    }

    /// Makes the next `count` writes of the connection's WAL buffer fail as
    /// a full disk would (for tests); false when the connection has no log
    /// open through the VFS.
    static func failNextFlushes(_ count: Int32, of connection: OpaquePointer) -> Bool {
        var count = count
        return sqlite3_file_control(connection, "main", STRATA_FCNTL_WAL_BUFFER_FAIL_FLUSHES, &count) == SQLITE_OK
    }

    /// The writes a connection's open WAL file was asked for and those the
    /// VFS made (nil when the connection's database was not opened through
    /// the VFS, or has no log open).
    static func counts(of connection: OpaquePointer) -> (made: Int64, asked: Int64)? {
        var counts = StrataWALBufferCounts(writesMade: 0, writesAsked: 0)
        guard sqlite3_file_control(connection, "main", STRATA_FCNTL_WAL_BUFFER_COUNTS, &counts) == SQLITE_OK,
              counts.writesAsked > 0 else { return nil }
        return (counts.writesMade, counts.writesAsked)
    }
}
