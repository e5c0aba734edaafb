import Foundation
import GRDB
import Testing
@testable import StrataSQLite

/// The page cache over SQLite's (`Sources/CStrataSQLite/page_cache.c`):
/// installed in this process, it skips the truncations that remove nothing,
/// and a database written through it, with splits of random-key indexes,
/// rolled-back growth and reopening, reads back exactly as written.
@Suite struct SQLitePageCacheTests {
    @Test func itIsInstalledUnlessTheEnvironmentAsksForSQLitesOwn() {
        let optedOut = ProcessInfo.processInfo.environment["STRATA_SQLITE_DEFAULT_PAGE_CACHE"] != nil
        #expect(SQLitePageCache.isInstalled == !optedOut)
    }

    @Test func writesThroughItReadBackAsWrittenAndItSkipsEmptyTruncations() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("cache.sqlite").path
        var configuration = Configuration()
        // A small cache: pages leave it and are read again.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -512") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT NOT NULL, b BLOB NOT NULL)")
            try db.execute(sql: "CREATE INDEX ta ON t (a)")
            try db.execute(sql: "CREATE INDEX tb ON t (b)")
        }
        let before = SQLitePageCache.counts
        // Seeded, so that a failure repeats.
        var generator = SplitMix(seed: 0x5354_5241_5441)
        var expected: [Int64: (String, Data)] = [:]
        var nextID: Int64 = 1
        func row() -> (Int64, String, Data) {
            defer { nextID += 1 }
            let text = String((0..<24).map { _ in "0123456789ABCDEF".randomElement(using: &generator) ?? "0" })
            let blob = Data((0..<Int.random(in: 20...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            return (nextID, text, blob)
        }
        for round in 0..<400 {
            // Every fourth transaction grows the file by hundreds of rows
            // and rolls back; every fifth rolls back a savepoint's.
            let rollsBack = round % 4 == 3
            var written: [(Int64, String, Data)] = []
            try pool.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    for _ in 0..<(rollsBack ? 400 : 20) {
                        let (id, a, b) = row()
                        try db.execute(sql: "INSERT INTO t (id, a, b) VALUES (?, ?, ?)", arguments: [id, a, b])
                        written.append((id, a, b))
                    }
                    if round % 5 == 4 {
                        try db.execute(sql: "SAVEPOINT grow")
                        for _ in 0..<300 {
                            let (id, a, b) = row()
                            try db.execute(sql: "INSERT INTO t (id, a, b) VALUES (?, ?, ?)", arguments: [id, a, b])
                        }
                        try db.execute(sql: "ROLLBACK TO SAVEPOINT grow")
                        try db.execute(sql: "RELEASE SAVEPOINT grow")
                    }
                    return rollsBack ? .rollback : .commit
                }
            }
            if !rollsBack { for (id, a, b) in written { expected[id] = (a, b) } }
            if round % 50 == 49 { try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) } }
        }
        // Read back through the pool's readers and through a new connection.
        for reader in [pool as any DatabaseReader, try DatabaseQueue(path: path)] {
            let (rows, integrity) = try reader.read { db in
                (try Row.fetchAll(db, sql: "SELECT id, a, b FROM t ORDER BY id"), try String.fetchOne(db, sql: "PRAGMA integrity_check"))
            }
            #expect(integrity == "ok")
            #expect(rows.count == expected.count)
            let matches = rows.allSatisfy { row in
                guard let (a, b) = expected[row["id"]] else { return false }
                return row["a"] == a && row["b"] == b
            }
            #expect(matches)
        }
        // The counts are the process's (other tests' connections add to
        // them too): they show the cache at work, the rows its correctness.
        if SQLitePageCache.isInstalled {
            let after = SQLitePageCache.counts
            #expect(after.skipped > before.skipped)
            #expect(after.passed > before.passed)
        }
        try pool.close()
    }
}

/// The fixtures' generator, for `random(in:using:)`.
extension SplitMix: RandomNumberGenerator {}
