import GRDB
import GRDBSQLite
import Testing
@testable import StrataSQLite

/// `Database.boundedCachedStatement(sql:limit:)`: statements whose text clients
/// shape are cached as GRDB caches them, but a connection never keeps more
/// than the limit prepared, however many different texts it is given.
@Suite struct DatabaseBoundedStatementCacheTests {
    private static func statements(_ db: Database) -> Int {
        Database.statementCount(db.sqliteConnection, above: .max - 1)
    }

    @Test("A text asked again gets the cached statement, prepared once")
    func cachedTextIsNotPreparedAgain() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try db.execute(sql: "CREATE TABLE t (k INTEGER)")
            let first = try db.boundedCachedStatement(sql: "SELECT k FROM t WHERE k = ?", limit: 8)
            let before = Self.statements(db)
            let second = try db.boundedCachedStatement(sql: "SELECT k FROM t WHERE k = ?", limit: 8)
            #expect(first === second)
            #expect(Self.statements(db) == before)
        }
    }

    @Test("Many different texts leave at most the limit prepared, and each statement handed out still runs")
    func manyTextsStayWithinTheLimit() throws {
        let queue = try DatabaseQueue()
        let limit = 16
        try queue.inDatabase { db in
            try db.execute(sql: "CREATE TABLE t (k INTEGER)")
            try db.execute(sql: "INSERT INTO t (k) VALUES (1), (2), (3)")
            var most = 0
            for n in 1...(4 * limit) {
                // A different shape each time, as clients' predicates are.
                let sql = "SELECT count(*) FROM t WHERE " + Array(repeating: "k > ?", count: n).joined(separator: " AND ")
                let statement = try db.boundedCachedStatement(sql: sql, limit: limit)
                most = max(most, Self.statements(db))
                let count = try Int.fetchOne(statement, arguments: StatementArguments(Array(repeating: 0, count: n)))
                #expect(count == 3, "shape \(n)")
            }
            #expect(most >= limit, "the test never reached the limit")
            #expect(most <= limit)
            // Cleared caches prepare again on their next use.
            let again = try db.boundedCachedStatement(sql: "SELECT count(*) FROM t WHERE k > ?", limit: limit)
            #expect(try Int.fetchOne(again, arguments: [1]) == 2)
        }
    }
}
