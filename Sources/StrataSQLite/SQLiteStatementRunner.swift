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
///   every time: text and blobs from one buffer of the run's, which SQLite
///   reads without a copy of its own (GRDB's `String.bind` converts text
///   to a new C string, and SQLite copies what GRDB binds), anything else
///   with GRDB's public `bind(to:at:)`; the bindings are cleared after the
///   run;
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
        // GRDB's reset traps on the error of a statement whose last run
        // failed (SQLite's reset answers it again): reset it here first.
        sqlite3_reset(statement.sqliteStatement)
        statement.setUncheckedArguments(StatementArguments())
        self.statement = statement
        self.path = path
    }

    /// Binds `values` to parameters 1, 2, … and runs the statement.
    ///
    /// Text and blobs (up to ``SQLiteRunnerBinding/copyLimit`` each) are copied into one
    /// buffer for the run (on the stack when they are small) and bound from
    /// it without SQLite copying them again (`SQLITE_STATIC`; SQLite's own
    /// copy is an allocation per value): the buffer outlives the
    /// statement's execution, and the bindings are cleared before it goes.
    func run<Values: Collection>(_ values: Values) throws where Values.Element: SQLiteRunnerValue {
        var bytes = 0
        for value in values { bytes += value.copiedBytes }
        try withUnsafeTemporaryAllocation(byteCount: max(bytes, 1), alignment: 1) { buffer in
            let sqliteStatement = statement.sqliteStatement
            // No binding may point into the buffer once it is gone, even
            // after a failure.
            defer { sqlite3_clear_bindings(sqliteStatement) }
            try run(values, copyingInto: buffer)
        }
    }

    /// ``run(_:)`` with `buffer` (large enough for every text and blob of
    /// `values`) holding the bound bytes.
    private func run<Values: Collection>(_ values: Values, copyingInto buffer: UnsafeMutableRawBufferPointer) throws where Values.Element: SQLiteRunnerValue {
        let sqliteStatement = statement.sqliteStatement
        var index: CInt = 1
        var offset = 0
        for value in values {
            let start = offset
            var code = value.bind(to: sqliteStatement, at: index, buffer: buffer, offset: &offset)
            if code == Self.misuse, index == 1 {
                sqlite3_reset(sqliteStatement)
                if values.count <= Self.smallStatement {
                    statement.setUncheckedArguments(StatementArguments())
                } else {
                    _ = try Row.fetchCursor(statement)
                }
                offset = start
                code = value.bind(to: sqliteStatement, at: index, buffer: buffer, offset: &offset)
            }
            guard code == 0 else {
                throw StrataError(.storeSave, "store \(path): binding parameter \(index) failed with SQLite error \(code)")
            }
            index += 1
        }
        // Reset now, whether it ran or failed (GRDB resets before each
        // execution, after the binds), so that the next run's binds are
        // accepted at once: otherwise the first one fails with
        // SQLITE_MISUSE and the statement is reset and its bindings
        // cleared, every row; and GRDB's own reset traps on a failed run's
        // error.
        defer { sqlite3_reset(sqliteStatement) }
        try statement.execute()
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
}
