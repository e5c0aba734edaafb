import Foundation
import GRDBSQLite
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataSQLite

/// 100k Book inserts through a context with one save, then a fetch of them
/// all with a predicate and a sort; beside raw SQLite doing the same rows
/// with prepared statements in one transaction, in the same run.
struct EmbeddedBenchmark {
    let rows: Int
    let runs: Int

    /// The page caches compared: Strata's default and SQLite's own (2 MB).
    /// Both sides always use the same one.
    static let caches: [(label: String, bytes: Int)] = [
        ("\(StoreDescription.defaultPageCacheBytes / (1024 * 1024)) MiB page cache", StoreDescription.defaultPageCacheBytes),
        ("SQLite's default 2 MB cache", 0),
    ]

    func run() async throws {
        let data = BookDataset(count: rows)
        print("Embedded stack vs raw SQLite C API, \(rows) Book rows (best of \(runs); WAL, synchronous=FULL and the same page cache on both sides)")
        let widths = [76, 10, 10, 7]
        printRow(["operation", "Strata s", "raw s", "ratio"], widths: widths)
        for (index, cache) in Self.caches.enumerated() {
            var strataInsert = Double.infinity, strataFetch = Double.infinity
            var historyInsert = Double.infinity
            var rawInsert = Double.infinity, rawFetch = Double.infinity
            var rawDeferredInsert = Double.infinity
            var strataCount = 0, rawCount = 0
            for _ in 0..<runs {
                let (si, sf, sc, _) = try await strata(data, history: false, cacheBytes: cache.bytes)
                // History's cost is shown once, at the default cache.
                if index == 0 {
                    let (hi, _, _, _) = try await strata(data, history: true, cacheBytes: cache.bytes)
                    historyInsert = min(historyInsert, hi)
                }
                let (ri, rf, rc) = try raw(data, cacheBytes: cache.bytes)
                if index == 0 {
                    let (rd, _, _) = try raw(data, cacheBytes: cache.bytes, checkpointsInCommit: false)
                    rawDeferredInsert = min(rawDeferredInsert, rd)
                }
                strataInsert = min(strataInsert, si); strataFetch = min(strataFetch, sf)
                rawInsert = min(rawInsert, ri); rawFetch = min(rawFetch, rf)
                strataCount = sc; rawCount = rc
            }
            printRow(["insert \(rows) (one save / one transaction), \(cache.label)", String(format: "%.3f", strataInsert), String(format: "%.3f", rawInsert), String(format: "%.2f", strataInsert / rawInsert)], widths: widths)
            if index == 0 {
                // Strata checkpoints after answering its save; SQLite's
                // default does it inside the COMMIT: the same comparison
                // with raw SQLite deferring its checkpoint too.
                printRow(["insert \(rows), raw also checkpointing after its commit, \(cache.label)", String(format: "%.3f", strataInsert), String(format: "%.3f", rawDeferredInsert), String(format: "%.2f", strataInsert / rawDeferredInsert)], widths: widths)
                printRow(["insert \(rows), recording persistent history, \(cache.label)", String(format: "%.3f", historyInsert), String(format: "%.3f", rawInsert), String(format: "%.2f", historyInsert / rawInsert)], widths: widths)
            }
            printRow(["fetch \(strataCount)/\(rawCount) (pages > 0, sort by title), \(cache.label)", String(format: "%.3f", strataFetch), String(format: "%.3f", rawFetch), String(format: "%.2f", strataFetch / rawFetch)], widths: widths)
        }
        print("")
    }

    /// Only Strata's side, `runs` times (to profile it without the
    /// baseline's samples); prints each run's seconds, wall and CPU (all
    /// threads: the CPU figure varies less between runs on a shared VM).
    func runStrataOnly() async throws {
        let data = BookDataset(count: rows)
        for run in 1...max(1, runs) {
            let (insert, fetch, count, cpu) = try await strata(data, history: false, cacheBytes: StoreDescription.defaultPageCacheBytes)
            print(String(format: "run %d: insert %d %.3f s, fetch %d %.3f s (CPU %.3f s, %.3f s)", run, rows, insert, count, fetch, cpu.insert, cpu.fetch))
        }
    }

    /// Inserts and fetches through a container, context and SQLite store.
    /// The raw side writes no history; with `history`, the store records
    /// it (one transaction, one change row per object), as a store shared
    /// by several processes must. `cacheBytes` is each connection's page cache.
    private func strata(_ data: BookDataset, history: Bool, cacheBytes: Int) async throws -> (Double, Double, Int, cpu: (insert: Double, fetch: Double)) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try await PersistentContainer(
            model: BooksSample.model,
            storeDescriptions: BooksSample.sqliteStores(in: directory).map { description in
                var description = description
                description.tracksHistory = history
                description.pageCacheBytes = cacheBytes
                return description
            },
            factory: .standard,
            transformers: BooksSample.transformers,
            transientRules: BooksSample.transientRules
        )
        let insertContext = container.newBackgroundContext(name: "insert")
        let insertCPU = Stopwatch.processCPU()
        let insert = try await Stopwatch.time {
            try await insertContext.perform { context in
                for row in data.rows {
                    let book = try context.insert("Book")
                    try book.setValue(.uuid(row.uuid), forKey: "uuid")
                    try book.setValue(.string(row.title), forKey: "title")
                    try book.setValue(.string(row.author), forKey: "author")
                    try book.setValue(.date(row.publishDate), forKey: "publishDate")
                    try book.setValue(.decimal(row.price), forKey: "price")
                    try book.setValue(.integer(row.pages), forKey: "pages")
                }
                try await context.save()
            }
        }
        let fetchCPU = Stopwatch.processCPU()
        let fetchContext = container.newBackgroundContext(name: "fetch")
        let request = try FetchRequest(entityName: "Book", format: "pages > 0", sortDescriptors: [StrataQuery.SortDescriptor("title")])
        var count = 0
        let fetch = try await Stopwatch.time {
            count = try await fetchContext.perform { context in
                try await context.fetch(request).count
            }
        }
        let endCPU = Stopwatch.processCPU()
        // The inserting context (and its 100k objects) goes away here, not
        // while the fetch is timed.
        withExtendedLifetime(insertContext) {}
        try await container.close()
        return (insert, fetch, count, (fetchCPU - insertCPU, endCPU - fetchCPU))
    }

    /// The same rows through the SQLite C API, with Strata's durability
    /// (a WAL sync at commit) and the same page cache (0: SQLite's default).
    /// `checkpointsInCommit` false: no automatic checkpoint in the COMMIT;
    /// the log is checkpointed after the timed insert, untimed.
    private func raw(_ data: BookDataset, cacheBytes: Int, checkpointsInCommit: Bool = true) throws -> (Double, Double, Int) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-raw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = try RawSQLite(path: directory.appendingPathComponent("raw.sqlite").path)
        try db.execute("PRAGMA journal_mode=WAL")
        try db.execute("PRAGMA synchronous=FULL")
        if cacheBytes > 0 { try db.execute("PRAGMA cache_size=-\(max(1, cacheBytes / 1024))") }
        if !checkpointsInCommit { try db.execute("PRAGMA wal_autocheckpoint=0") }
        try db.createBookTable()

        let insert = try Stopwatch.time {
            try db.execute("BEGIN IMMEDIATE")
            let statement = try db.prepare("INSERT INTO book (pk, ent, opt, uuid, title, author, publishDate, price, pages, canonicalTitle) VALUES (?, 1, 1, ?, ?, ?, ?, ?, ?, ?)")
            defer { sqlite3_finalize(statement) }
            for (i, row) in data.rows.enumerated() {
                sqlite3_bind_int64(statement, 1, Int64(i + 1))
                withUnsafeBytes(of: row.uuid.uuid) { bytes in
                    _ = sqlite3_bind_blob(statement, 2, bytes.baseAddress, 16, RawSQLite.transient)
                }
                sqlite3_bind_text(statement, 3, row.title, -1, RawSQLite.transient)
                sqlite3_bind_text(statement, 4, row.author, -1, RawSQLite.transient)
                sqlite3_bind_double(statement, 5, row.publishDate.timeIntervalSinceReferenceDate)
                sqlite3_bind_text(statement, 6, row.priceText, -1, RawSQLite.transient)
                sqlite3_bind_int64(statement, 7, row.pages)
                sqlite3_bind_text(statement, 8, row.title.lowercased(), -1, RawSQLite.transient)
                guard sqlite3_step(statement) == SQLITE_DONE else { throw db.error("insert") }
                sqlite3_reset(statement)
            }
            try db.execute("COMMIT")
        }
        if !checkpointsInCommit { try db.execute("PRAGMA wal_checkpoint(PASSIVE)") }

        var count = 0
        let fetch = try Stopwatch.time {
            let statement = try db.prepare("SELECT pk, ent, opt, uuid, title, author, publishDate, price, pages, canonicalTitle, coverColor FROM book WHERE pages > ? ORDER BY title, pk")
            defer { sqlite3_finalize(statement) }
            sqlite3_bind_int64(statement, 1, 0)
            var titles: [String] = []
            var uuids: [UUID] = []
            var total: Int64 = 0
            while sqlite3_step(statement) == SQLITE_ROW {
                total &+= sqlite3_column_int64(statement, 0)
                if let blob = sqlite3_column_blob(statement, 3), sqlite3_column_bytes(statement, 3) == 16 {
                    let bytes = blob.assumingMemoryBound(to: UInt8.self)
                    uuids.append(UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])))
                }
                titles.append(String(cString: sqlite3_column_text(statement, 4)))
                _ = String(cString: sqlite3_column_text(statement, 5))
                _ = sqlite3_column_double(statement, 6)
                _ = Decimal(string: String(cString: sqlite3_column_text(statement, 7)))
                total &+= sqlite3_column_int64(statement, 8)
                _ = String(cString: sqlite3_column_text(statement, 9))
            }
            count = titles.count
        }
        return (insert, fetch, count)
    }
}

/// A minimal owner of a raw `sqlite3*` handle for the baseline.
final class RawSQLite {
    /// `SQLITE_TRANSIENT`: SQLite copies bound data.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open(path, &handle) == SQLITE_OK else {
            throw StrataError(.storeOpen, "raw sqlite3_open failed for \(path)")
        }
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw error(sql) }
    }

    func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { throw error(sql) }
        return statement
    }

    /// The `Book` table as Strata's store lays it out, with the sample's
    /// indexes (title, pages, unique uuid): both benchmarks' baseline.
    func createBookTable() throws {
        try execute("CREATE TABLE book (pk INTEGER PRIMARY KEY, ent INTEGER NOT NULL, opt INTEGER NOT NULL, uuid BLOB, title TEXT, author TEXT, publishDate REAL, price TEXT, pages INTEGER, canonicalTitle TEXT, coverColor BLOB)")
        try execute("CREATE INDEX book_title ON book (title)")
        try execute("CREATE INDEX book_pages ON book (pages)")
        try execute("CREATE UNIQUE INDEX book_uuid ON book (uuid)")
    }

    func error(_ what: String) -> StrataError {
        StrataError(.storeSave, "raw SQLite \(what): \(String(cString: sqlite3_errmsg(handle)))")
    }
}
