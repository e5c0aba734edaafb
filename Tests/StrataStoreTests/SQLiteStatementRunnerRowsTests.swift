import Foundation
import GRDB
import StrataQuery
import Testing
@testable import StrataSQLite

/// `SQLiteStatementRunner.forEachRow`: a cached statement stepped on
/// SQLite directly reads what GRDB reads with the same arguments, and
/// leaves the statement to GRDB's next use however its read ended.
@Suite struct SQLiteStatementRunnerRowsTests {
    /// Every column of every row, read by GRDB from the current row.
    private static func read(_ statement: Statement, _ arguments: [SQLValue], _ db: Database) throws -> [[DatabaseValue]] {
        var rows: [[DatabaseValue]] = []
        let columns = statement.columnCount
        try SQLiteStatementRunner.forEachRow(of: statement, arguments: arguments, db) {
            rows.append((0..<columns).map { DatabaseValue(sqliteStatement: statement.sqliteStatement, index: CInt($0)) })
        }
        return rows
    }

    /// NULL and numbers are bound by `forEachRow` itself; decimals, text,
    /// blobs and UUIDs through the `DatabaseValue` GRDB would bind, so for
    /// them this checks that they arrive whole (the store's own tests
    /// compare whole queries on every kind against GRDB's reads).
    @Test("Each kind of argument binds as GRDB binds it")
    func bindsAsGRDB() throws {
        let queue = try DatabaseQueue()
        let arguments: [SQLValue] = [
            .null, .integer(-42), .integer(.max), .real(-0.5), .decimal(Decimal(string: "12.75") ?? 0),
            .text("naïve"), .text("nul\u{0}inside"), .text(""), .blob(Data([0, 1, 2])), .blob(Data()),
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()),
        ]
        let sql = "SELECT " + arguments.indices.map { _ in "?" }.joined(separator: ", ")
        try queue.inDatabase { db in
            let statement = try db.cachedStatement(sql: sql)
            let direct = try Self.read(statement, arguments, db)
            let grdb = try Row.fetchAll(statement, arguments: StatementArguments(arguments.map(\.databaseValue)))
            #expect(direct.count == 1 && grdb.count == 1)
            #expect(direct.first == grdb.first.map { row in Array(row.databaseValues) })
            // Read again, after GRDB's own run of the statement.
            #expect(try Self.read(statement, arguments, db) == direct)
        }
    }

    @Test("A step that fails throws SQLite's error, and GRDB reuses the statement")
    func failedStepLeavesTheStatementUsable() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try db.execute(sql: "CREATE TABLE t (x INTEGER)")
            try db.execute(sql: "INSERT INTO t VALUES (1), (2), (3)")
            // abs() of the smallest integer is an overflow: the third row (in
            // rowid order) fails.
            let statement = try db.cachedStatement(sql: "SELECT abs(CASE WHEN x = 3 THEN ? ELSE x END) FROM t")
            var seen = 0
            let error = try #require(throws: DatabaseError.self) {
                try SQLiteStatementRunner.forEachRow(of: statement, arguments: [.integer(.min)], db) { seen += 1 }
            }
            #expect(error.resultCode == .SQLITE_ERROR)
            #expect(seen == 2)
            // GRDB resets the statement before binding: it would throw
            // the failed step's error again had it been left.
            #expect(try Int.fetchAll(statement, arguments: [7]) == [1, 2, 7])
            #expect(try Self.read(statement, [.integer(-9)], db).map { $0.first } == [1, 2, 9].map { $0.databaseValue })
        }
    }

    @Test("A body that throws stops the read, and the next read starts over")
    func throwingBodyStopsTheRead() throws {
        struct Stop: Error {}
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            let statement = try db.cachedStatement(sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT x FROM c")
            var seen = 0
            #expect(throws: Stop.self) {
                try SQLiteStatementRunner.forEachRow(of: statement, arguments: [.integer(10)], db) {
                    seen += 1
                    if seen == 3 { throw Stop() }
                }
            }
            #expect(try Self.read(statement, [.integer(4)], db).count == 4)
            #expect(try Int.fetchAll(statement, arguments: [2]) == [1, 2])
        }
    }

    @Test("Arguments that do not match the parameters are refused before a step")
    func refusesTheWrongNumberOfArguments() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            let statement = try db.cachedStatement(sql: "SELECT ?, ?")
            for arguments: [SQLValue] in [[.integer(1)], [.integer(1), .integer(2), .integer(3)]] {
                var seen = 0
                let error = try #require(throws: DatabaseError.self) {
                    try SQLiteStatementRunner.forEachRow(of: statement, arguments: arguments, db) { seen += 1 }
                }
                #expect(error.resultCode == .SQLITE_RANGE)
                #expect(seen == 0)
            }
            #expect(try Self.read(statement, [.integer(1), .text("b")], db) == [[1.databaseValue, "b".databaseValue]])
        }
    }
}
