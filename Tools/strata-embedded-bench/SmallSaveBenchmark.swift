import Foundation
import GRDBSQLite
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataSQLite

/// Many small concurrent saves, as a server makes them: `concurrency`
/// tasks each saving one new `Book` at a time (uuid, title, pages) into a
/// SQLite store recording history, until `saves` are done.
///
/// - `store`: each save is a ``StoreChanges`` handed straight to the store
///   (group commit, history, the store's own checks).
/// - `direct`: each save is a ``Coordinator/save(_:)`` of one insert (its direct route)
///   (defaults, derivation, validation, change set; no context),
///   as `strata-server` handles an insert request.
/// - `context`: each save goes through a fresh context (insert, set values,
///   save), as `strata-server` handles any other save.
/// - raw SQLite does the same rows and history rows with prepared statements
///   on one thread, in transactions of `concurrency` saves, each in its own
///   savepoint, synced at commit: the floor a group commit can reach.
///
/// Figures are saves per second and CPU microseconds per save (every
/// thread of the process).
struct SmallSaveBenchmark {
    let saves: Int
    let concurrency: Int
    let runs: Int

    func run() async throws {
        print("Small saves: \(saves) saves of one Book, \(concurrency) at a time, history recorded (best of \(runs); WAL, synchronous=FULL)")
        let widths = [44, 12, 12, 12, 12]
        printRow(["path", "saves/s", "CPU µs/save", "raw saves/s", "ratio"], widths: widths)
        var raw = (rate: 0.0, cpu: Double.infinity)
        var store = (rate: 0.0, cpu: Double.infinity)
        var context = (rate: 0.0, cpu: Double.infinity)
        var direct = (rate: 0.0, cpu: Double.infinity)
        for _ in 0..<max(1, runs) {
            let r = try rawSQLite()
            raw = (max(raw.rate, r.rate), min(raw.cpu, r.cpu))
            let s = try await strata(.store)
            store = (max(store.rate, s.rate), min(store.cpu, s.cpu))
            let d = try await strata(.direct)
            direct = (max(direct.rate, d.rate), min(direct.cpu, d.cpu))
            let c = try await strata(.context)
            context = (max(context.rate, c.rate), min(context.cpu, c.cpu))
        }
        printRow(["raw SQLite (one thread, one savepoint each)", String(format: "%.0f", raw.rate), String(format: "%.1f", raw.cpu), String(format: "%.0f", raw.rate), "1.00"], widths: widths)
        for (label, figures) in [("store.save, one StoreChanges each", store), ("Coordinator.save, one insert (the server's inserts)", direct), ("a fresh context each (other saves)", context)] {
            printRow([label, String(format: "%.0f", figures.rate), String(format: "%.1f", figures.cpu), String(format: "%.0f", raw.rate), String(format: "%.2f", raw.rate / figures.rate)], widths: widths)
        }
        print("")
    }

    /// The way each save is made.
    enum Path {
        case store, direct, context
    }

    /// One run through Strata; the saves per second and CPU µs per save.
    private func strata(_ path: Path) async throws -> (rate: Double, cpu: Double) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-small-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try await PersistentContainer(
            model: BooksSample.model,
            storeDescriptions: BooksSample.sqliteStores(in: directory), factory: .standard,
            transformers: BooksSample.transformers,
            transientRules: BooksSample.transientRules
        )
        guard let store = container.coordinator.stores(for: "Book").first else {
            throw StrataError(.storeOpen, "no store holds Book")
        }
        let counter = SaveCounter(limit: saves)
        let tasks = concurrency
        let cpu = Stopwatch.processCPU()
        let seconds = try await Stopwatch.time {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<tasks {
                    group.addTask {
                        while let serial = counter.next() {
                            let title = "Bench book \(serial)"
                            let pages = Int64(serial % 1000) + 1
                            switch path {
                            case .context:
                                let context = container.newBackgroundContext(name: "small-save")
                                try await context.perform { context in
                                    let book = try context.insert("Book")
                                    try book.setValue(.uuid(UUID()), forKey: "uuid")
                                    try book.setValue(.string(title), forKey: "title")
                                    try book.setValue(.integer(pages), forKey: "pages")
                                    try await context.save()
                                }
                            case .direct:
                                let insert = SaveRequest.Insert(id: .temporary(entityName: "Book"), values: ["uuid": .uuid(UUID()), "title": .string(title), "pages": .integer(pages)])
                                guard try await container.coordinator.save(SaveRequest(inserts: [insert], author: "bench")).route == .direct else {
                                    throw StrataError(.storeSave, "a direct insert was left to a context")
                                }
                            case .store:
                                let values: [String: PropertyValue] = [
                                    "uuid": .uuid(UUID()), "title": .string(title), "pages": .integer(pages),
                                    "canonicalTitle": .string(title.lowercased()),
                                ]
                                let changes = StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: values)], author: "bench", contextName: "small-save")
                                guard case .committed = try await store.save(changes) else {
                                    throw StrataError(.storeSave, "a small save did not commit")
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let used = Stopwatch.processCPU() - cpu
        try await container.close()
        return (Double(saves) / seconds, used / Double(saves) * 1e6)
    }

    /// The same rows and history rows through the C API, in transactions
    /// of `concurrency` saves.
    private func rawSQLite() throws -> (rate: Double, cpu: Double) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-small-raw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = try RawSQLite(path: directory.appendingPathComponent("raw.sqlite").path)
        try db.execute("PRAGMA journal_mode=WAL")
        try db.execute("PRAGMA synchronous=FULL")
        try db.execute("PRAGMA cache_size=-\(StoreDescription.defaultPageCacheBytes / 1024)")
        try db.createBookTable()
        try db.execute("CREATE TABLE history (token INTEGER PRIMARY KEY AUTOINCREMENT, timestamp REAL NOT NULL, author TEXT, context TEXT, process INTEGER NOT NULL, origin TEXT NOT NULL)")
        try db.execute("CREATE TABLE history_change (token INTEGER NOT NULL, seq INTEGER NOT NULL, type INTEGER NOT NULL, entity TEXT NOT NULL, key INTEGER NOT NULL, version INTEGER NOT NULL, properties TEXT NOT NULL, PRIMARY KEY (token, seq)) WITHOUT ROWID")
        let insert = try db.prepare("INSERT INTO book (pk, ent, opt, uuid, title, pages, canonicalTitle) VALUES (?, 1, 1, ?, ?, ?, ?)")
        let transaction = try db.prepare("INSERT INTO history (timestamp, author, context, process, origin) VALUES (?, 'bench', 'small-save', 1, 'raw')")
        let change = try db.prepare("INSERT INTO history_change (token, seq, type, entity, key, version, properties) VALUES (last_insert_rowid(), 1, 0, 'Book', ?, 1, 'canonicalTitle,pages,title,uuid')")
        let savepoint = try db.prepare("SAVEPOINT s")
        let release = try db.prepare("RELEASE s")
        defer { for statement in [insert, transaction, change, savepoint, release] { sqlite3_finalize(statement) } }
        func step(_ statement: OpaquePointer?) throws {
            guard sqlite3_step(statement) == SQLITE_DONE else { throw db.error("small save") }
            sqlite3_reset(statement)
        }
        let cpu = Stopwatch.processCPU()
        let seconds = try Stopwatch.time {
            var serial = 0
            while serial < saves {
                try db.execute("BEGIN IMMEDIATE")
                for _ in 0..<min(concurrency, saves - serial) {
                    serial += 1
                    let title = "Bench book \(serial)"
                    try step(savepoint)
                    sqlite3_bind_int64(insert, 1, Int64(serial))
                    withUnsafeBytes(of: UUID().uuid) { bytes in
                        _ = sqlite3_bind_blob(insert, 2, bytes.baseAddress, 16, RawSQLite.transient)
                    }
                    sqlite3_bind_text(insert, 3, title, -1, RawSQLite.transient)
                    sqlite3_bind_int64(insert, 4, Int64(serial % 1000) + 1)
                    sqlite3_bind_text(insert, 5, title.lowercased(), -1, RawSQLite.transient)
                    try step(insert)
                    sqlite3_bind_double(transaction, 1, Date().timeIntervalSinceReferenceDate)
                    try step(transaction)
                    sqlite3_bind_int64(change, 1, Int64(serial))
                    try step(change)
                    try step(release)
                }
                try db.execute("COMMIT")
            }
        }
        let used = Stopwatch.processCPU() - cpu
        return (Double(saves) / seconds, used / Double(saves) * 1e6)
    }
}

/// Hands out save serials until the limit (shared by the saving tasks).
final class SaveCounter: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `count` is read and written only
    // while `lock` is held (in `next()`); `limit` is immutable.
    private let lock = NSLock()
    private var count = 0
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// The next serial, or nil once `limit` were handed out.
    func next() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard count < limit else { return nil }
        count += 1
        return count
    }
}
