import GRDB
import GRDBSQLite
import StrataModel
import StrataStore

/// Runs one prepared statement many times, binding positional values
/// straight to the SQLite statement and stepping it on SQLite directly,
/// instead of building a `StatementArguments` (an array, and a walk over
/// every parameter) per run and going through GRDB's execution (checks for
/// aborted transactions, suspension and cancellation, the region of the
/// database read, transaction observers: none of which a store's writer
/// uses; the writer's transactions are begun and ended on SQLite directly
/// too, see ``inImmediateTransaction(_:_:)``).
///
/// - Each value is bound on `Statement.sqliteStatement`, every parameter
///   every time: text and blobs from one buffer of the run's, which SQLite
///   reads without a copy of its own (GRDB's `String.bind` converts text
///   to a new C string, and SQLite copies what GRDB binds), anything else
///   with GRDB's public `bind(to:at:)`; the bindings are cleared after the
///   run.
/// - The statement is reset after each run, whether it succeeded or failed,
///   so that the next run's binds are accepted. SQLite refuses to bind
///   (`SQLITE_MISUSE`) a statement that ran since its last reset: one that
///   someone else ran meanwhile is reset on that refusal and bound again.
/// - A failed step throws a `DatabaseError` with SQLite's extended code and
///   message, as GRDB's would. The statement stays usable (the reset clears
///   its error), though GRDB, had it run the statement, would have dropped
///   it from its cache.
/// - GRDB does not record the values bound here as the statement's
///   arguments: a GRDB execution of the same cached statement must pass
///   its own (one without would run with the parameters cleared). Only
///   runners run these statements.
///
/// A runner lives within one database access.
struct SQLiteStatementRunner {
    /// `SQLITE_MISUSE`.
    private static let misuse: CInt = 21

    let statement: Statement
    private let path: String

    /// Prepares `statement` for runs.
    init(_ statement: Statement, path: String) {
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
        assert(values.count == Int(sqlite3_bind_parameter_count(sqliteStatement)), "a value for each parameter")
        var index: CInt = 1
        var offset = 0
        for value in values {
            let start = offset
            var code = value.bind(to: sqliteStatement, at: index, buffer: buffer, offset: &offset)
            if code == Self.misuse, index == 1 {
                sqlite3_reset(sqliteStatement)
                offset = start
                code = value.bind(to: sqliteStatement, at: index, buffer: buffer, offset: &offset)
            }
            guard code == 0 else {
                throw StrataError(.storeSave, "store \(path): binding parameter \(index) failed with SQLite error \(code)")
            }
            index += 1
        }
        // Reset now, whether it ran or failed, so that the next run's binds
        // are accepted at once (and the error of a failed run is cleared).
        defer { sqlite3_reset(sqliteStatement) }
        while true {
            switch sqlite3_step(sqliteStatement) {
            case SQLITE_DONE:
                return
            case SQLITE_ROW:
                continue
            case let code:
                throw Self.failure(code, of: statement)
            }
        }
    }

    /// The error of `statement`'s step that answered `code` (extended: GRDB
    /// turns extended result codes on), as GRDB reports one: the code, the
    /// connection's message and the SQL.
    private static func failure(_ code: CInt, of statement: Statement) -> DatabaseError {
        let message = sqlite3_errmsg(sqlite3_db_handle(statement.sqliteStatement)).map { String(cString: $0) }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
    }

    /// Runs `statement` (one without parameters or rows, such as
    /// `SAVEPOINT`, if any) once, stepping it on SQLite directly: GRDB does
    /// not see it run. Throws SQLite's error as a `DatabaseError`.
    static func step(_ statement: Statement?) throws {
        guard let statement else { return }
        let sqliteStatement = statement.sqliteStatement
        sqlite3_reset(sqliteStatement)
        defer { sqlite3_reset(sqliteStatement) }
        let code = sqlite3_step(sqliteStatement)
        guard code == SQLITE_DONE else { throw failure(code, of: statement) }
    }

    /// Runs `body` in an immediate transaction, begun and ended with kept
    /// statements stepped on SQLite directly (GRDB's `inTransaction`
    /// prepares `BEGIN` and `COMMIT` again on every call): committed when
    /// `body` returns `.commit`, rolled back when it returns `.rollback` or
    /// throws, or when the commit fails.
    static func inImmediateTransaction(_ db: Database, _ body: () throws -> Database.TransactionCompletion) throws {
        try step(db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION"))
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
                try step(db.cachedStatement(sql: "COMMIT TRANSACTION"))
            } catch {
                try? rollback(db)
                throw error
            }
        case .rollback:
            try rollback(db)
        }
    }

    /// Runs `body` in a deferred transaction (a read transaction once
    /// `body` reads), begun and committed with kept statements as
    /// ``inImmediateTransaction(_:_:)`` does; rolled back when `body`
    /// throws.
    static func inDeferredTransaction<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try step(db.cachedStatement(sql: "BEGIN DEFERRED TRANSACTION"))
        let result: T
        do {
            result = try body()
            try step(db.cachedStatement(sql: "COMMIT TRANSACTION"))
        } catch {
            try? rollback(db)
            throw error
        }
        return result
    }

    /// Rolls back the open transaction, if SQLite still has one (a failed
    /// statement may have ended it already).
    private static func rollback(_ db: Database) throws {
        guard sqlite3_get_autocommit(db.sqliteConnection) == 0 else { return }
        try step(db.cachedStatement(sql: "ROLLBACK TRANSACTION"))
    }
}
