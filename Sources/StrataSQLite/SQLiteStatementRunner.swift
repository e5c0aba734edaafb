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
    /// Text and blobs (up to ``copyLimit`` each) are copied into one
    /// buffer for the run (on the stack when they are small) and bound from
    /// it without SQLite copying them again (`SQLITE_STATIC`; SQLite's own
    /// copy is an allocation per value): the buffer outlives the
    /// statement's execution, and the bindings are cleared before it goes.
    func run(_ values: some Collection<DatabaseValue>) throws {
        var bytes = 0
        for value in values {
            switch value.storage {
            case .string(let text): bytes += Self.copied(text.utf8.count)
            case .blob(let data): bytes += Self.copied(data.count)
            default: break
            }
        }
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
    private func run(_ values: some Collection<DatabaseValue>, copyingInto buffer: UnsafeMutableRawBufferPointer) throws {
        let sqliteStatement = statement.sqliteStatement
        var index: CInt = 1
        var offset = 0
        for value in values {
            let start = offset
            var code = Self.bind(value, to: sqliteStatement, at: index, buffer: buffer, offset: &offset)
            if code == Self.misuse, index == 1 {
                sqlite3_reset(sqliteStatement)
                if values.count <= Self.smallStatement {
                    statement.setUncheckedArguments(StatementArguments())
                } else {
                    _ = try Row.fetchCursor(statement)
                }
                offset = start
                code = Self.bind(value, to: sqliteStatement, at: index, buffer: buffer, offset: &offset)
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

    /// SQLite uses the bytes it is given without copying them: they must
    /// stay until the binding is replaced or cleared.
    private static let unmanaged: sqlite3_destructor_type? = nil
    /// SQLite copies the bytes it is given before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    /// Values up to this size are copied into the run's buffer; larger ones
    /// (rare: a big text or blob) are handed to SQLite to copy, so that
    /// the buffer stays small and a value SQLite refuses (past its length
    /// limit) is never copied first.
    static let copyLimit = 64 * 1024

    /// The bytes a value of `count` bytes takes in the run's buffer.
    private static func copied(_ count: Int) -> Int {
        count <= copyLimit ? count : 0
    }

    /// Binds one value, text and blobs up to ``copyLimit`` from their copy
    /// in `buffer` at `offset` (moved past it); SQLite's result code.
    private static func bind(_ value: DatabaseValue, to statement: SQLiteStatement, at index: CInt, buffer: UnsafeMutableRawBufferPointer, offset: inout Int) -> CInt {
        switch value.storage {
        case .string(var text):
            return text.withUTF8 { bytes in
                // SQLite's own answer for text past its length type.
                guard bytes.count <= Int(CInt.max) else { return SQLITE_TOOBIG }
                guard bytes.count <= copyLimit, let base = buffer.baseAddress, offset + bytes.count <= buffer.count else {
                    // An empty buffer may have no address, which would bind NULL.
                    let source = bytes.baseAddress.map(UnsafeRawPointer.init) ?? UnsafeRawPointer(("" as StaticString).utf8Start)
                    return sqlite3_bind_text(statement, index, source.assumingMemoryBound(to: CChar.self), CInt(bytes.count), transient)
                }
                let copy = base + offset
                // A zero-length copy still has an address (an empty text, not NULL).
                if let source = bytes.baseAddress, !bytes.isEmpty { copy.copyMemory(from: source, byteCount: bytes.count) }
                offset += bytes.count
                return sqlite3_bind_text(statement, index, copy.bindMemory(to: CChar.self, capacity: max(bytes.count, 1)), CInt(bytes.count), unmanaged)
            }
        case .blob(let data) where !data.isEmpty && data.count <= copyLimit:
            return data.withUnsafeBytes { bytes in
                guard let source = bytes.baseAddress, let base = buffer.baseAddress, offset + bytes.count <= buffer.count else {
                    return value.bind(to: statement, at: index)
                }
                let copy = base + offset
                copy.copyMemory(from: source, byteCount: bytes.count)
                offset += bytes.count
                return sqlite3_bind_blob(statement, index, copy, CInt(bytes.count), unmanaged)
            }
        default:
            // NULL, numbers, an empty blob (NULL, as GRDB binds it) and a
            // value past the copy limit (copied by SQLite).
            return value.bind(to: statement, at: index)
        }
    }
}
