import Logging
import PostgresNIO
import StrataModel
import StrataQuery
import StrataStore

/// Runs a save's or a read's statements on one connection, binding
/// ``SQLValue``s, and collects their rows.
struct PostgresStatementRunner {
    let connection: PostgresConnection
    let logger: Logger

    /// The rows of `query`.
    @discardableResult
    func run(_ query: PostgresQuery) async throws -> [PostgresRandomAccessRow] {
        var rows: [PostgresRandomAccessRow] = []
        for try await row in try await connection.query(query, logger: logger) {
            rows.append(PostgresRandomAccessRow(row))
        }
        return rows
    }

    /// The rows of `sql` with `arguments` bound to `$1`, `$2`….
    @discardableResult
    func run(_ sql: String, _ arguments: [SQLValue]) async throws -> [PostgresRandomAccessRow] {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments { try PostgresValueCoding.append(argument, to: &bindings) }
        return try await run(PostgresQuery(unsafeSQL: sql, binds: bindings))
    }

    /// The rows of `sql` with an array of keys bound to `$1`.
    @discardableResult
    func run(_ sql: String, keys: [Int64]) async throws -> [PostgresRandomAccessRow] {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(keys)
        return try await run(PostgresQuery(unsafeSQL: sql, binds: bindings))
    }

    /// The rows of `sql`, or nil when it broke a uniqueness constraint
    /// (SQLSTATE 23505). When `mayConflict`, the statement runs inside a
    /// savepoint, so that the transaction goes on after such a failure;
    /// otherwise a violation is an error like any other.
    func run(_ sql: String, _ arguments: [SQLValue], mayConflict: Bool) async throws -> [PostgresRandomAccessRow]? {
        guard mayConflict else { return try await run(sql, arguments) }
        try await run(PostgresQuery(unsafeSQL: "SAVEPOINT strata_unique"))
        do {
            let rows = try await run(sql, arguments)
            try await run(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT strata_unique"))
            return rows
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            try await run(PostgresQuery(unsafeSQL: "ROLLBACK TO SAVEPOINT strata_unique"))
            return nil
        }
    }

    /// The current snapshots of rows of `table` with these keys.
    func snapshots(_ decoder: PostgresRowDecoder, table: String, keys: [Int64]) async throws -> [Snapshot] {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(keys)
        let sql = "SELECT \(decoder.selectList(table)) FROM \(SQLSchema.quote(table)) WHERE \(SQLSchema.quote("Z_PK")) = ANY($1)"
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        return try await decoder.snapshots(rows, table: table, connection: connection, logger: logger)
    }
}
