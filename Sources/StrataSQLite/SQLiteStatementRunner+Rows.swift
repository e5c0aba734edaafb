import Foundation
import GRDB
import GRDBSQLite
import StrataQuery

extension SQLiteStatementRunner {
    /// Steps `statement` (a prepared statement of `db`) through its rows
    /// with `arguments` bound to parameters 1, 2, …, calling `body` on each
    /// row while it is the statement's current row.
    ///
    /// GRDB's cursor builds its `StatementArguments` (an array of boxed
    /// values), a `Row` with a column-name dictionary, and a cursor object
    /// for every read; a small indexed query spends as long on those as on
    /// its rows. Here the values are bound straight to SQLite: numbers
    /// with no copy, text, blobs, decimals and UUIDs as GRDB binds them.
    ///
    /// How it stays within GRDB's contract: the statement is reset before
    /// its bindings are set (SQLite refuses to bind a statement that ran
    /// since its last reset) and reset and cleared after the read, whether
    /// it completed or failed, so that GRDB's own next use of the cached
    /// statement never meets the error of a failed step (its `setArguments`
    /// would throw it again, and `setUncheckedArguments` trap on it). GRDB
    /// does not see this statement run: callers use it for one-statement
    /// reads only, on connections with no transaction observer. GRDB still
    /// records the arguments it last bound itself: every GRDB read of these
    /// statements passes its arguments, which binds them again (a read
    /// without arguments would run with the parameters cleared here).
    ///
    /// Throws SQLite's error as a `DatabaseError` (an interrupted read
    /// as `SQLITE_INTERRUPT`), and `body`'s errors as they are.
    static func forEachRow(of statement: Statement, arguments: [SQLValue], _ db: Database, _ body: () throws -> Void) throws {
        let sqliteStatement = statement.sqliteStatement
        sqlite3_reset(sqliteStatement)
        defer {
            sqlite3_reset(sqliteStatement)
            sqlite3_clear_bindings(sqliteStatement)
        }
        let parameters = Int(sqlite3_bind_parameter_count(sqliteStatement))
        guard parameters == arguments.count else {
            throw DatabaseError(resultCode: .SQLITE_RANGE, message: "\(arguments.count) arguments for \(parameters) parameters", sql: statement.sql)
        }
        var index: CInt = 1
        for argument in arguments {
            let code: CInt
            switch argument {
            case .null: code = sqlite3_bind_null(sqliteStatement, index)
            case .integer(let value): code = sqlite3_bind_int64(sqliteStatement, index, value)
            case .real(let value): code = sqlite3_bind_double(sqliteStatement, index, value)
            default: code = argument.databaseValue.bind(to: sqliteStatement, at: index)
            }
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
            }
            index += 1
        }
        while true {
            let code = sqlite3_step(sqliteStatement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
            }
            try body()
        }
    }
}
