import Foundation
import GRDB
import GRDBSQLite
import StrataModel
import StrataQuery
import Testing
@testable import StrataStore
@testable import StrataSQLite

/// The VFS that writes a commit's write-ahead-log frames at once
/// (`Sources/CStrataSQLite`): the store uses it, it gathers writes, and
/// nothing it holds back can be lost or read early.
@Suite struct SQLiteWALBufferTests {
    typealias Models = SQLiteTestModels

    private func open(_ url: URL) async throws -> SQLiteStore {
        try await SQLiteStore(description: StoreDescription(url: url, type: .sqlite, busyTimeout: .seconds(2)), model: Models.library())
    }

    private func tags(_ count: Int, prefix: String, nameLength: Int = 20) -> StoreChanges {
        let padding = String(repeating: "x", count: max(0, nameLength - prefix.count - 6))
        return StoreChanges(inserts: (0..<count).map { index in
            .init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("\(prefix)\(index)-\(padding)")])
        })
    }

    /// Rows of `table` and SQLite's integrity check, read through a
    /// connection of SQLite's default VFS (as another process would).
    private func readPlainly(_ path: String, table: String) throws -> (rows: Int, integrity: String) {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? -1,
             try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "")
        }
    }

    @Test func theStoreWritesItsLogThroughTheVFSAndGathersACommitsFrames() async throws {
        #expect(SQLiteWALBuffer.isAvailable)
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory.storeURL)
        let database = try store.openDatabase()
        let name = try await database.writeWithoutTransaction { db -> String? in
            var name: UnsafeMutablePointer<CChar>?
            guard let connection = db.sqliteConnection,
                  sqlite3_file_control(connection, "main", SQLITE_FCNTL_VFSNAME, &name) == SQLITE_OK,
                  let name else { return nil }
            defer { sqlite3_free(name) }
            return String(cString: name)
        }
        #expect(name == "\(SQLiteWALBuffer.vfsName)/unix", "\(name ?? "nil")")

        func counts() async throws -> (made: Int64, asked: Int64) {
            try await database.writeWithoutTransaction { db in
                try #require(db.sqliteConnection.flatMap { SQLiteWALBuffer.counts(of: $0) })
            }
        }
        _ = try await store.save(tags(1, prefix: "warm"))
        let before = try await counts()
        // One commit of 400 tags: dozens of frames, two writes asked for each.
        _ = try await store.save(tags(400, prefix: "t", nameLength: 60))
        let after = try await counts()
        let asked = after.asked - before.asked
        let made = after.made - before.made
        #expect(asked >= 20, "asked \(asked)")
        #expect(made >= 1 && made * 10 <= asked, "made \(made) of \(asked)")
        try await store.close()
        #expect(try readPlainly(directory.storeURL.path, table: "ZTAG") == (401, "ok"))
    }

    /// Commits larger than a system call (124 KiB) and than the buffer
    /// (1 MiB), and many small ones, all read back after reopening, through
    /// both the store and SQLite's default VFS.
    @Test func largeAndManyCommitsSurviveReopening() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory.storeURL)
        _ = try await store.save(tags(600, prefix: "mid", nameLength: 400))     // about 250 KiB of pages
        _ = try await store.save(tags(4_000, prefix: "big", nameLength: 500))   // about 2 MiB
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask { _ = try? await store.save(tags(3, prefix: "small\(index)-")) }
            }
        }
        #expect(try await store.count(ResolvedFetch(entityName: "Tag")) == 4_900)
        try await store.close()
        #expect(try readPlainly(directory.storeURL.path, table: "ZTAG") == (4_900, "ok"))
        let reopened = try await open(directory.storeURL)
        #expect(try await reopened.count(ResolvedFetch(entityName: "Tag")) == 4_900)
        try await reopened.close()
    }

    /// With `synchronous=OFF` SQLite never syncs the log, so only the VFS's
    /// own writes (at each commit frame; the shared-memory barrier as a
    /// guard) put a commit's frames in the file before it is published: a
    /// reader of another connection, of the default VFS, must still see
    /// every row of every commit at once.
    @Test func readersSeeEveryCommitEvenWhenTheLogIsNeverSynced() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("plain.sqlite").path
        let pool = try DatabasePool(path: SQLiteWALBuffer.uri(forPath: path))
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = OFF")
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            try db.execute(sql: "CREATE INDEX t_body ON t (body)")
        }
        let other = try DatabaseQueue(path: path)
        let body = String(repeating: "b", count: 300)
        var expected = 0
        for round in 0..<40 {
            try pool.write { db in
                for row in 0..<(1 + round * 3) {
                    try db.execute(sql: "INSERT INTO t (body) VALUES (?)", arguments: ["\(round)-\(row)-\(body)"])
                    expected += 1
                }
            }
            let seen = try other.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
            let seenByIndex = try other.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t INDEXED BY t_body WHERE body > ''") }
            let seenByPool = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
            #expect(seen == expected && seenByIndex == expected && seenByPool == expected, "round \(round)")
        }
        let counts = pool.writeWithoutTransaction { db in db.sqliteConnection.flatMap { SQLiteWALBuffer.counts(of: $0) } }
        let gathered = try #require(counts)
        #expect(gathered.made < gathered.asked)
        try pool.close()
        try other.close()
        #expect(try readPlainly(path, table: "t") == (expected, "ok"))
    }

    /// A path with the characters a `file:` URI reserves is still that
    /// path: the store is created there and opens again.
    @Test func pathsWithURICharactersAreTheFilesTheyName() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let url = directory.url.appendingPathComponent("odd ?name# 100%/a%20b?.sqlite")
        #expect(SQLiteWALBuffer.uri(forPath: "/a b/c?d#e%f.sqlite") == "file:///a b/c%3Fd%23e%25f.sqlite?vfs=\(SQLiteWALBuffer.vfsName)")
        #expect(SQLiteWALBuffer.uri(forPath: "//x/y.sqlite").hasPrefix("file:////x/y.sqlite?"))
        var store = try await open(url)
        _ = try await store.save(tags(5, prefix: "odd"))
        try await store.close()
        #expect(FileManager.default.fileExists(atPath: url.path))
        store = try await open(url)
        #expect(try await store.count(ResolvedFetch(entityName: "Tag")) == 5)
        try await store.close()
        #expect(try readPlainly(url.path, table: "ZTAG") == (5, "ok"))
    }

    /// A database opened without power-safe overwrite (`psow=0`) has its
    /// commits padded to a sector after the sync: its log is written as
    /// SQLite asks, not gathered.
    @Test func logsWithoutPowerSafeOverwriteAreNotGathered() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("psow.sqlite").path
        let pool = try DatabasePool(path: SQLiteWALBuffer.uri(forPath: path) + "&psow=0")
        let counts = try pool.writeWithoutTransaction { db -> (made: Int64, asked: Int64)? in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
            for round in 0..<5 {
                try db.inTransaction {
                    for row in 0..<20 { try db.execute(sql: "INSERT INTO t (body) VALUES (?)", arguments: ["\(round)-\(row)"]) }
                    return .commit
                }
            }
            return db.sqliteConnection.flatMap { SQLiteWALBuffer.counts(of: $0) }
        }
        let written = try #require(counts)
        #expect(written.made == written.asked)
        try pool.close()
        #expect(try readPlainly(path, table: "t") == (100, "ok"))
    }

    // MARK: - Failed writes

    /// A pool through the VFS on a table of 2,000 rows (a unique `k`, a
    /// flag `n`, 300-byte blobs), checkpointed, its writer's page cache
    /// 10 pages so that a transaction spills frames to the log before it
    /// commits.
    private func spillingPool(_ directory: SQLiteTestDirectory) throws -> (pool: DatabasePool, path: String) {
        let path = directory.url.appendingPathComponent("spill.sqlite").path
        let pool = try DatabasePool(path: SQLiteWALBuffer.uri(forPath: path))
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER UNIQUE, n INTEGER NOT NULL DEFAULT 0, v BLOB)")
            try db.execute(sql: """
                INSERT INTO t (k, v) WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000)
                SELECT i, randomblob(300) FROM c
                """)
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            try db.execute(sql: "PRAGMA cache_size = 10")
        }
        return (pool, path)
    }

    private func failNextFlush(_ db: Database) throws {
        let connection = try #require(db.sqliteConnection)
        #expect(SQLiteWALBuffer.failNextFlushes(1, of: connection))
    }

    /// A save whose commit cannot be written fails, writes nothing, and the
    /// store goes on saving.
    @Test func aCommitWhoseWriteFailsFailsAndChangesNothing() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory.storeURL)
        _ = try await store.save(tags(5, prefix: "before"))
        let database = try store.openDatabase()
        try await database.writeWithoutTransaction { db in try failNextFlush(db) }
        await #expect(throws: (any Error).self) { _ = try await store.save(tags(50, prefix: "lost")) }
        _ = try await store.save(tags(5, prefix: "after"))
        #expect(try await store.count(ResolvedFetch(entityName: "Tag")) == 10)
        try await store.close()
        #expect(try readPlainly(directory.storeURL.path, table: "ZTAG") == (10, "ok"))
    }

    /// A spilled frame still in the buffer is read back by a later statement
    /// of the same transaction and its write fails: the whole transaction
    /// is lost (SQLite rolls it back; a full-disk error would have let it
    /// roll back that statement and commit the rest over frames that were
    /// never written), the file stays whole, and the next transaction works.
    @Test func aFailedWriteOfSpilledFramesLosesTheWholeTransaction() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (pool, path) = try spillingPool(directory)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "UPDATE t SET n = 1, v = randomblob(300) WHERE id <= 400")
            try failNextFlush(db)
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE t SET k = k + 100000 WHERE id <= 400") }
            #expect(db.isInsideTransaction == false)
            if db.isInsideTransaction { try db.execute(sql: "COMMIT") }
        }
        let other = try DatabaseQueue(path: path)
        #expect(try other.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t WHERE n = 1") } == 0)
        #expect(try other.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
        try pool.write { db in try db.execute(sql: "UPDATE t SET n = 2 WHERE id <= 10") }
        #expect(try other.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t WHERE n = 2") } == 10)
        try other.close()
        try pool.close()
    }

    /// A transaction rolled back while its spilled frames cannot be written
    /// still gives up the write lock: another connection writes at once.
    @Test func aRollbackWhoseFramesCannotBeWrittenReleasesTheWriteLock() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (pool, path) = try spillingPool(directory)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "INSERT INTO t (k, v) SELECT k + 10000, randomblob(700) FROM t WHERE id <= 300")
            try failNextFlush(db)
            try db.execute(sql: "ROLLBACK")
        }
        // No busy timeout: a lock still held would fail at once.
        let other = try DatabaseQueue(path: path)
        try other.write { db in try db.execute(sql: "UPDATE t SET n = 3 WHERE id = 1") }
        try pool.write { db in try db.execute(sql: "UPDATE t SET n = 4 WHERE id = 2") }
        #expect(try other.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 2000)
        try other.close()
        try pool.close()
    }

    /// What is in the log file is what recovery needs: after commits that
    /// spilled, rewrote spilled pages in place and had their checksums
    /// rewritten, a copy of the database and its log (without the shared
    /// memory, so SQLite rebuilds the index from the log and checks every
    /// frame's checksum) opened with the default VFS holds every commit.
    @Test func aCopyOfTheLogRecoversEveryCommit() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (pool, path) = try spillingPool(directory)
        for round in 1...3 {
            try pool.write { db in
                try db.execute(sql: "UPDATE t SET n = ?, v = randomblob(300) WHERE id <= 600", arguments: [round])
                try db.execute(sql: "UPDATE t SET n = ?, v = randomblob(300) WHERE id <= 600", arguments: [round * 10])
                try db.execute(sql: "INSERT INTO t (k, n, v) VALUES (?, -1, 'marker')", arguments: [100_000 + round])
            }
        }
        let copy = directory.url.appendingPathComponent("copy", isDirectory: true)
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        let copied = copy.appendingPathComponent("spill.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: copied)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copied + "-wal")
        try pool.close()
        let recovered = try DatabaseQueue(path: copied)
        let found = try recovered.read { db in
            (rows: try Int.fetchOne(db, sql: "SELECT count(*) FROM t"),
             markers: try Int.fetchOne(db, sql: "SELECT count(*) FROM t WHERE n = -1"),
             lastRound: try Int.fetchOne(db, sql: "SELECT count(*) FROM t WHERE n = 30"),
             integrity: try String.fetchOne(db, sql: "PRAGMA integrity_check"))
        }
        try recovered.close()
        #expect(found.rows == 2003)
        #expect(found.markers == 3)
        #expect(found.lastRound == 600)
        #expect(found.integrity == "ok")
    }
}
