import Foundation
import GRDB
import Testing
@testable import StrataStore
@testable import StrataSQLite

/// Reads on the caller's thread: the pool's answers, or nil (and nothing
/// kept) whenever the read must go through the pool instead.
@Suite struct SQLiteInlineReadersTests {
    /// A WAL database of `rows` rows, written through a pool (as a store's).
    private func database(rows: Int, in directory: SQLiteTestDirectory) throws -> (path: String, pool: DatabasePool) {
        let path = directory.url.appendingPathComponent("inline.sqlite").path
        let pool = try DatabasePool(path: path)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
            for i in 0..<rows { try db.execute(sql: "INSERT INTO t (name) VALUES (?)", arguments: ["n\(i)"]) }
        }
        return (path, pool)
    }

    /// A query whose virtual machine runs about five million steps.
    private static let long = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000) SELECT count(*) FROM c"

    @Test func readsWhatThePoolReads() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (path, pool) = try database(rows: 100, in: directory)
        let readers = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 2)
        let inline = readers.read(oneStatement: true) { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        #expect(inline == 100)
        let inTransaction = readers.read(oneStatement: false) { db in
            try (Int.fetchOne(db, sql: "SELECT count(*) FROM t"), String.fetchOne(db, sql: "SELECT name FROM t WHERE id = 7"))
        }
        #expect(inTransaction?.0 == 100 && inTransaction?.1 == "n6")
        // A commit made since is seen by the next read.
        try pool.write { db in try db.execute(sql: "DELETE FROM t WHERE id > 50") }
        #expect(readers.read(oneStatement: true) { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 50)
        readers.close()
        try pool.close()
    }

    @Test func aThreadReadsAgainWithTheConnectionItReadWith() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (path, pool) = try database(rows: 1, in: directory)
        let readers = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 2)
        // Another thread reads while this one holds a connection: it takes
        // the other one, and gives it back last.
        let other = OtherThreadRead()
        let mine = readers.read(oneStatement: true) { db -> ObjectIdentifier in
            other.run { readers.read(oneStatement: true) { ObjectIdentifier($0) } }
            return ObjectIdentifier(db)
        }
        #expect(other.result != nil && other.result != mine)
        // The last one given back is the other thread's; this thread still
        // takes its own, and the other thread its own.
        #expect(readers.read(oneStatement: true) { ObjectIdentifier($0) } == mine)
        other.run { readers.read(oneStatement: true) { ObjectIdentifier($0) } }
        #expect(other.result != nil && other.result != mine)
        other.stop()
        readers.close()
        try pool.close()
    }

    /// Runs reads on one thread of its own (the same one every time) and
    /// waits for each.
    private final class OtherThreadRead: @unchecked Sendable {
        // @unchecked: `work` and `result` are handed between the caller and
        // the thread through the semaphores (written before a signal, read
        // after the wait), never touched by both at once.
        var result: ObjectIdentifier?
        private var work: (@Sendable () -> ObjectIdentifier?)?
        private let ready = DispatchSemaphore(value: 0)
        private let done = DispatchSemaphore(value: 0)

        init() {
            Thread { [self] in
                while true {
                    ready.wait()
                    guard let work else { return }
                    result = work()
                    done.signal()
                }
            }.start()
        }

        func run(_ read: @escaping @Sendable () -> ObjectIdentifier?) {
            work = read
            ready.signal()
            done.wait()
        }

        /// Ends the thread.
        func stop() {
            work = nil
            ready.signal()
        }
    }

    @Test func aReadPastItsBudgetIsStoppedAndLeftToThePool() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (path, pool) = try database(rows: 1, in: directory)
        let hurried = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 1, budget: .zero)
        #expect(hurried.read(oneStatement: true) { db in try Int.fetchOne(db, sql: Self.long) } == nil)
        // The connection is not spoilt: a short read still runs.
        #expect(hurried.read(oneStatement: true) { db in try Int.fetchOne(db, sql: "SELECT 1") } == 1)
        // Named, a statement stopped for its budget is then left to the
        // pool without being tried; others still run here.
        #expect(hurried.read(oneStatement: true, statement: Self.long) { db in try Int.fetchOne(db, sql: Self.long) } == nil)
        var tried = false
        #expect(hurried.read(oneStatement: true, budget: .seconds(60), statement: Self.long) { db -> Int? in
            tried = true
            return try Int.fetchOne(db, sql: Self.long)
        } == nil)
        #expect(!tried)
        #expect(hurried.read(oneStatement: true, statement: "SELECT 2") { db in try Int.fetchOne(db, sql: "SELECT 2") } == 2)
        let patient = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 1, budget: .seconds(60))
        #expect(patient.read(oneStatement: true) { db in try Int.fetchOne(db, sql: Self.long) } == 1_000_000)
        hurried.close()
        patient.close()
        try pool.close()
    }

    /// A statement whose result was too large to read at once (a store's
    /// fetch found more than a batch) is left to the pool, as a slow one.
    @Test func aStatementLeftToThePoolIsNotTriedHere() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (path, pool) = try database(rows: 3, in: directory)
        let readers = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 1, budget: .seconds(60))
        let statement = "SELECT count(*) FROM t"
        #expect(!readers.leavesToPool(statement))
        #expect(readers.read(oneStatement: true, statement: statement) { db in try Int.fetchOne(db, sql: statement) } == 3)
        readers.leaveToPool(statement)
        #expect(readers.leavesToPool(statement))
        var tried = false
        #expect(readers.read(oneStatement: true, statement: statement) { db -> Int? in
            tried = true
            return try Int.fetchOne(db, sql: statement)
        } == nil)
        #expect(!tried)
        // Another statement still runs here.
        #expect(readers.read(oneStatement: true, statement: "SELECT 2") { db in try Int.fetchOne(db, sql: "SELECT 2") } == 2)
        readers.close()
        try pool.close()
    }

    @Test func theStoppingRuleWeighsCPUAndWallTime() {
        let ms: UInt64 = 1_000_000
        var clock = SQLiteInlineReaders.Clock(allowed: 10 * ms, now: 1_000 * ms)
        clock.startedOnCPU = 500 * ms
        // Before the deadline: never.
        #expect(!clock.mustStop(now: 1_009 * ms, onCPU: 600 * ms))
        // Past it, having used the budget on the CPU: a slow statement.
        #expect(clock.mustStop(now: 1_011 * ms, onCPU: 510 * ms))
        // Past it with less used (descheduled): goes on ...
        #expect(!clock.mustStop(now: 1_011 * ms, onCPU: 509 * ms))
        #expect(!clock.mustStop(now: 1_040 * ms, onCPU: 501 * ms))
        // ... until four budgets of wall time.
        #expect(clock.mustStop(now: 1_041 * ms, onCPU: 501 * ms))
        // An unknown CPU time counts as used.
        #expect(clock.mustStop(now: 1_011 * ms, onCPU: 0))
        // Budgets too large for the clock never wrap around to stop at once.
        let endless = SQLiteInlineReaders.Clock(allowed: .max, now: 1_000 * ms)
        #expect(!endless.mustStop(now: 1_000_000 * ms, onCPU: 0))
    }

    @Test func aReadOffTheCPUPastItsDeadlineGoesOnThenStopsWithoutBeingSlow() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (path, pool) = try database(rows: 1, in: directory)
        // Off the CPU past the deadline but within four budgets (a thread
        // descheduled on a busy host): the read goes on and answers.
        let patient = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 1, budget: .milliseconds(300))
        defer { patient.close() }
        let short = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000) SELECT count(*) FROM c"
        #expect(patient.read(oneStatement: true, statement: short) { db -> Int? in
            usleep(350_000)
            return try Int.fetchOne(db, sql: short)
        } == 5000)
        // Off the CPU past four budgets (waiting for the disk): stopped,
        // but it used almost no time, so it is not remembered as slow.
        let readers = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 1, budget: .milliseconds(20))
        defer { readers.close() }
        #expect(readers.read(oneStatement: true, statement: Self.long) { db -> Int? in
            usleep(100_000)
            return try Int.fetchOne(db, sql: Self.long)
        } == nil)
        var tried = false
        #expect(readers.read(oneStatement: true, budget: .seconds(60), statement: Self.long) { db -> Int? in
            tried = true
            return try Int.fetchOne(db, sql: Self.long)
        } == 1_000_000)
        #expect(tried)
        // Stopped so again and again (a statement waiting on the disk each
        // time): slow after a few stops in a row.
        for _ in 0..<SQLiteInlineReaders.strikesToSlow {
            #expect(readers.read(oneStatement: true, statement: Self.long) { db -> Int? in
                usleep(100_000)
                return try Int.fetchOne(db, sql: Self.long)
            } == nil)
        }
        tried = false
        #expect(readers.read(oneStatement: true, budget: .seconds(60), statement: Self.long) { db -> Int? in
            tried = true
            return try Int.fetchOne(db, sql: Self.long)
        } == nil)
        #expect(!tried)
        try pool.close()
    }

    @Test func aValuePastTheLengthLimitIsLeftToThePool() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (path, pool) = try database(rows: 1, in: directory)
        let large = Data(repeating: 7, count: Int(SQLiteInlineReaders.maximumValueBytes) + 1)
        try pool.write { db in try db.execute(sql: "UPDATE t SET name = ? WHERE id = 1", arguments: [large]) }
        let readers = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 1)
        #expect(readers.read(oneStatement: true) { db in try Data.fetchOne(db, sql: "SELECT name FROM t WHERE id = 1") } == nil)
        // Its length is read here; the pool reads the value.
        #expect(readers.read(oneStatement: true) { db in try Int.fetchOne(db, sql: "SELECT length(name) FROM t WHERE id = 1") } == large.count)
        #expect(try pool.read { db in try Data.fetchOne(db, sql: "SELECT name FROM t WHERE id = 1") } == large)
        readers.close()
        try pool.close()
    }

    @Test func neverWaitsForAConnection() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (path, pool) = try database(rows: 3, in: directory)
        let readers = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 1)
        // The only connection is busy with the outer read: the inner one is refused.
        let nested = readers.read(oneStatement: true) { db -> Int?? in
            let inner = readers.read(oneStatement: true) { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM t")
            return inner
        }
        #expect(nested == .some(.none))
        // A body that throws: nil, for the pool to answer.
        #expect(readers.read(oneStatement: true) { db in try Int.fetchOne(db, sql: "SELECT nope FROM t") } == nil)
        readers.close()
        // Closed: nothing more is read here.
        #expect(readers.read(oneStatement: true) { db in try Int.fetchOne(db, sql: "SELECT 1") } == nil)
        try pool.close()
    }

    @Test("Many tasks read at once beside a writer: each read answers or is left to the pool")
    func concurrentReadsBesideAWriter() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let (path, pool) = try database(rows: 10, in: directory)
        let readers = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 2)
        let writer = Task {
            for i in 0..<200 { try await pool.write { db in try db.execute(sql: "INSERT INTO t (name) VALUES (?)", arguments: ["w\(i)"]) } }
        }
        let counts = await withTaskGroup(of: [Int?].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<200).map { _ in readers.read(oneStatement: false) { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") ?? -1 } }
                }
            }
            return await group.reduce(into: [Int?]()) { $0 += $1 }
        }
        try await writer.value
        let answered = counts.compactMap { $0 }
        #expect(!answered.isEmpty)
        #expect(answered.allSatisfy { (10...210).contains($0) })
        readers.close()
        try pool.close()
    }

    @Test func aFileItCannotReadTurnsItOff() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("not-a-database").path
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        let readers = SQLiteInlineReaders(path: path, configuration: Configuration(), capacity: 2)
        #expect(readers.read(oneStatement: true) { db in try Int.fetchOne(db, sql: "SELECT 1") } == nil)
        #expect(readers.read(oneStatement: true) { db in try Int.fetchOne(db, sql: "SELECT 1") } == nil)
    }
}
