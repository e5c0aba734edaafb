import Foundation
import GRDB
import StrataQuery
import Testing
@testable import StrataSQLite

/// `SQLiteStatementRunner.run`: values bound and the statement stepped on
/// SQLite directly write what GRDB writes, a failed step throws GRDB's
/// error with SQLite's extended code, and the statement stays usable by
/// the runner and by GRDB however a run ended.
@Suite struct SQLiteStatementRunnerTests {
    private static let insert = "INSERT INTO t (k, s, b, u) VALUES (?, ?, ?, ?)"

    private static func table(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE t (k INTEGER UNIQUE, s TEXT, b BLOB, u BLOB)")
    }

    private static func rows(_ db: Database) throws -> [[DatabaseValue]] {
        try Row.fetchAll(db, sql: "SELECT k, s, b, u FROM t ORDER BY k").map { Array($0.databaseValues) }
    }

    @Test("Runs write what GRDB writes with the same values")
    func writesAsGRDB() throws {
        let direct = try DatabaseQueue()
        let reference = try DatabaseQueue()
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()
        let runs: [[SQLValue]] = [
            [.integer(1), .text("naïve"), .blob(Data([0, 1, 2])), .uuid(uuid)],
            [.integer(2), .text(""), .blob(Data()), .null],
            [.integer(3), .text(String(repeating: "é", count: SQLiteRunnerBinding.copyLimit)), .null, .uuid(uuid)],
        ]
        try direct.inDatabase { db in
            try Self.table(db)
            let runner = SQLiteStatementRunner(try db.cachedStatement(sql: Self.insert), path: "test")
            for values in runs { try runner.run(values) }
        }
        try reference.inDatabase { db in
            try Self.table(db)
            for values in runs { try db.execute(sql: Self.insert, arguments: StatementArguments(values.map(\.databaseValue))) }
        }
        let written = try direct.inDatabase(Self.rows)
        #expect(written.count == 3)
        #expect(written == (try reference.inDatabase(Self.rows)))
    }

    @Test("A failed run throws SQLite's extended code and message; the statement runs again, for the runner and for GRDB")
    func failedRunLeavesTheStatementUsable() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try Self.table(db)
            let runner = SQLiteStatementRunner(try db.cachedStatement(sql: Self.insert), path: "test")
            try runner.run([SQLValue.integer(1), .text("a"), .null, .null])
            do {
                try runner.run([SQLValue.integer(1), .text("b"), .null, .null])
                Issue.record("a duplicate key was written")
            } catch let error as DatabaseError {
                #expect(error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE)
                #expect(error.message?.contains("t.k") == true, "\(error)")
                #expect(error.sql == Self.insert)
            }
            try runner.run([SQLValue.integer(2), .text("c"), .null, .null])
            // GRDB's own run of the cached statement, then the runner again
            // on a statement GRDB left unreset.
            try db.cachedStatement(sql: Self.insert).execute(arguments: [3, "d", nil, nil])
            try runner.run([SQLValue.integer(4), .text("e"), .null, .null])
            #expect(try Self.rows(db).map { $0[1] } == ["a", "c", "d", "e"].map(\.databaseValue))
        }
    }

    @Test("A statement without parameters steps on SQLite; a failing one throws SQLite's code")
    func stepsStatements() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try Self.table(db)
            try SQLiteStatementRunner.step(db.cachedStatement(sql: "INSERT INTO t (k) VALUES (7)"))
            let error = #expect(throws: DatabaseError.self) {
                try SQLiteStatementRunner.step(db.cachedStatement(sql: "INSERT INTO t (k) VALUES (7)"))
            }
            #expect(error?.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE)
            try SQLiteStatementRunner.step(db.cachedStatement(sql: "INSERT INTO t (k) VALUES (8)"))
            #expect(try Int.fetchAll(db, sql: "SELECT k FROM t ORDER BY k") == [7, 8])
        }
    }

    private struct BodyFailed: Error {}

    @Test("A deferred transaction reads one snapshot while another connection commits, and ends however its body ends")
    func deferredTransactionReadsOneSnapshot() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("t.sqlite").path
        var configuration = Configuration()
        configuration.journalMode = .wal
        let writer = try DatabaseQueue(path: path, configuration: configuration)
        let reader = try DatabaseQueue(path: path, configuration: configuration)
        try writer.write { db in
            try Self.table(db)
            try db.execute(sql: "INSERT INTO t (k) VALUES (1)")
        }
        let counts = try reader.inDatabase { db in
            try SQLiteStatementRunner.inDeferredTransaction(db) {
                let before = try Int.fetchOne(db, sql: "SELECT count(*) FROM t")
                try writer.write { try $0.execute(sql: "INSERT INTO t (k) VALUES (2)") }
                let after = try Int.fetchOne(db, sql: "SELECT count(*) FROM t")
                #expect(db.isInsideTransaction)
                return (before, after)
            }
        }
        #expect(counts.0 == 1 && counts.1 == 1, "both reads in the transaction see its snapshot")
        try reader.inDatabase { db in
            #expect(!db.isInsideTransaction, "committed")
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM t")
            #expect(count == 2)
            #expect(throws: BodyFailed.self) {
                try SQLiteStatementRunner.inDeferredTransaction(db) {
                    _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM t")
                    throw BodyFailed()
                }
            }
            #expect(!db.isInsideTransaction, "rolled back after the body threw")
            // The kept BEGIN and COMMIT run again.
            let largest = try SQLiteStatementRunner.inDeferredTransaction(db) { try Int.fetchOne(db, sql: "SELECT max(k) FROM t") }
            #expect(largest == 2)
        }
    }
}
