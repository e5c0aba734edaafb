import GRDB
import GRDBSQLite
import StrataModel
import StrataStore

/// Runs one prepared statement many times, binding positional values
/// straight to the SQLite statement instead of building a
/// `StatementArguments` (an array, and a walk over every parameter) per run.
///
/// How it stays within GRDB's public contract:
/// - `setUncheckedArguments` (once, when the runner is made) resets the
///   statement, clears its bindings and records that its arguments are set,
///   so that `execute()` runs with whatever is bound;
/// - each value is bound on `Statement.sqliteStatement`, every parameter
///   every time: text from the string's own UTF-8 storage (GRDB's
///   `String.bind` converts it to a new C string first), anything else
///   with GRDB's public `bind(to:at:)`;
/// - SQLite refuses to bind (`SQLITE_MISUSE`) a statement that ran since its
///   last reset: the runner resets it after each run with `sqlite3_reset`
///   (which keeps GRDB's record that the arguments are bound; GRDB resets
///   again before stepping, which is harmless). A statement someone else ran
///   meanwhile is reset on that refusal, through `setUncheckedArguments`
///   again for statements with few parameters, or by creating a GRDB cursor
///   (which resets the statement, as documented on `DatabaseCursor`, and a
///   reset keeps the bindings, SQLite's contract) for the large multi-row
///   ones, and binds again.
///
/// A runner lives within one database access; a statement that failed is
/// dropped from GRDB's cache, so the caller makes a new runner after an error.
struct SQLiteStatementRunner {
    /// `SQLITE_MISUSE`.
    private static let misuse: CInt = 21
    /// Up to this many parameters, resetting through `setUncheckedArguments`
    /// (which walks every parameter) costs less than through a cursor (two
    /// small allocations).
    private static let smallStatement = 24

    let statement: Statement
    private let path: String

    /// Prepares `statement` for runs.
    init(_ statement: Statement, path: String) {
        statement.setUncheckedArguments(StatementArguments())
        self.statement = statement
        self.path = path
    }

    /// Binds `values` to parameters 1, 2, … and runs the statement.
    func run(_ values: some Collection<DatabaseValue>) throws {
        let sqliteStatement = statement.sqliteStatement
        var index: CInt = 1
        for value in values {
            var code = Self.bind(value, to: sqliteStatement, at: index)
            if code == Self.misuse, index == 1 {
                if values.count <= Self.smallStatement {
                    statement.setUncheckedArguments(StatementArguments())
                } else {
                    _ = try Row.fetchCursor(statement)
                }
                code = Self.bind(value, to: sqliteStatement, at: index)
            }
            guard code == 0 else {
                throw StrataError(.storeSave, "store \(path): binding parameter \(index) failed with SQLite error \(code)")
            }
            index += 1
        }
        try statement.execute()
        // Reset now (GRDB resets before each execution, after the binds)
        // so that the next run's binds are accepted at once: otherwise the
        // first one fails with SQLITE_MISUSE and the statement is reset
        // and its bindings cleared, every row.
        sqlite3_reset(sqliteStatement)
    }

    /// Runs `statement` (one without parameters or rows, such as
    /// `SAVEPOINT`, if any) once, stepping it on SQLite directly: GRDB does
    /// not see it run. Throws SQLite's error as a `DatabaseError`.
    static func step(_ statement: Statement?, _ db: Database) throws {
        guard let sqliteStatement = statement?.sqliteStatement else { return }
        sqlite3_reset(sqliteStatement)
        let code = sqlite3_step(sqliteStatement)
        sqlite3_reset(sqliteStatement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement?.sql)
        }
    }

    /// Runs `body` in an immediate transaction, begun and ended with kept
    /// statements stepped on SQLite directly (GRDB's `inTransaction`
    /// prepares `BEGIN` and `COMMIT` again on every call): committed when
    /// `body` returns `.commit`, rolled back when it returns `.rollback` or
    /// throws, or when the commit fails.
    static func inImmediateTransaction(_ db: Database, _ body: () throws -> Database.TransactionCompletion) throws {
        try step(db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION"), db)
        let completion: Database.TransactionCompletion
        do {
            completion = try body()
        } catch {
            try? rollback(db)
            throw error
        }
        switch completion {
        case .commit:
            do {
                try step(db.cachedStatement(sql: "COMMIT TRANSACTION"), db)
            } catch {
                try? rollback(db)
                throw error
            }
        case .rollback:
            try rollback(db)
        }
    }

    /// Rolls back the open transaction, if SQLite still has one (a failed
    /// statement may have ended it already).
    private static func rollback(_ db: Database) throws {
        guard sqlite3_get_autocommit(db.sqliteConnection) == 0 else { return }
        try step(db.cachedStatement(sql: "ROLLBACK TRANSACTION"), db)
    }

    /// SQLite copies the bytes it is given before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds one value; SQLite's result code.
    private static func bind(_ value: DatabaseValue, to statement: SQLiteStatement, at index: CInt) -> CInt {
        guard case .string(var text) = value.storage else { return value.bind(to: statement, at: index) }
        return text.withUTF8 { bytes in
            // An empty buffer may have no address, which would bind NULL.
            guard let base = bytes.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, transient) }
            // SQLite's own answer for text past its length type.
            guard bytes.count <= Int(CInt.max) else { return SQLITE_TOOBIG }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(statement, index, $0, CInt(bytes.count), transient)
            }
        }
    }
}
