import GRDB
import GRDBSQLite

extension Database {
    /// The prepared statement for `sql`, a statement whose text a client's
    /// request shapes (a fetch's or a count's predicate and sort, the
    /// columns an update sets, an access rule's check over a save's
    /// objects): GRDB's cached one, on a connection that never keeps more
    /// than `limit` statements prepared because of such texts.
    ///
    /// GRDB keeps every statement it caches until the connection closes,
    /// and clients can send any number of shapes: predicates of different
    /// structure, updates of different sets of attributes (values are
    /// bound, the shape is not), each a new SQL text kept prepared at about
    /// 5 KiB on every connection that ran it. So when this call prepares
    /// one (the connection's newest statement changed) and the connection
    /// then holds more than `limit`, the connection's cached statements are
    /// all finalized (`clearSchemaCache()`, which also clears GRDB's schema
    /// cache): those still in use stay alive until released, and the next
    /// use of any other prepares it again. A statement found in the cache
    /// costs two calls of `sqlite3_next_stmt` more than
    /// `cachedStatement(sql:)`; the statements are counted only after a
    /// prepare, which costs far more.
    ///
    /// `limit` covers the statements the store's own model makes too
    /// (inserts, reads by key, checks: the mapping's
    /// `cachedStatementLimit`), so that those are not prepared again for
    /// every new shape.
    func boundedCachedStatement(sql: String, limit: Int) throws -> Statement {
        let connection = sqliteConnection
        let newest = sqlite3_next_stmt(connection, nil)
        let statement = try cachedStatement(sql: sql)
        if sqlite3_next_stmt(connection, nil) != newest, Self.statementCount(connection, above: limit) > limit {
            clearSchemaCache()
        }
        return statement
    }

    /// How many prepared statements `connection` has, counted up to one
    /// past `limit`.
    static func statementCount(_ connection: SQLiteConnection?, above limit: Int) -> Int {
        var count = 0
        var next = sqlite3_next_stmt(connection, nil)
        while let statement = next, count <= limit {
            count += 1
            next = sqlite3_next_stmt(connection, statement)
        }
        return count
    }
}
