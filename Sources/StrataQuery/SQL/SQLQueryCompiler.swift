import Foundation
import StrataModel

/// Compiles a ``ResolvedFetch`` into SQL over an ``SQLSchema`` layout,
/// in a backend's ``SQLDialect``, with exactly the semantics documented on
/// ``QueryPredicate`` (those of ``PredicateEvaluator`` and
/// ``FetchEvaluator``).
///
/// - Every value is a bound argument; identifiers are always quoted.
/// - Entity restriction: `Z_ENT IN (?, …)` when the table also holds rows
///   of entities outside the fetch.
/// - To-one key paths: one `LEFT JOIN` per distinct path prefix (so a nil
///   hop gives NULL); to-many: `EXISTS` / `NOT EXISTS` (`ALL` is
///   `NOT EXISTS(… WHERE NOT COALESCE(inner, 0))`) and scalar subqueries for
///   `@count`, `@sum` (`0` when empty), `@avg` (NULL when empty), `@min`,
///   `@max` and `SUBQUERY(…).@count`.
/// - Two-valued logic: `==` is `IS`, `!=` is `IS NOT`; an ordering
///   comparison with NULL yields NULL, which `WHERE`, `AND`, `OR` and
///   `EXISTS` treat as false, and every `NOT` wraps its operand in
///   `COALESCE(…, 0)` so NULL never turns into true.
/// - Folding, string operators, `LIKE`, `MATCHES`, string ordering and
///   exact decimal and floating-point aggregates are the dialect's (SQLite's
///   go through `SQLiteFunctions`, registered on each connection).
/// - Sort keys become `ORDER BY` terms (case-insensitive ones on the
///   dialect's fold), NULL first ascending and last descending, as the
///   evaluator sorts; `Z_PK` ascending breaks ties.
///
/// Constructs SQL cannot express throw ``StrataError/Code/unsupported``
/// naming them: derivation functions (`canonical:`, `now()`…), transient
/// properties.
public struct SQLQueryCompiler: Sendable {
    /// The layout compiled against.
    public let schema: SQLSchema
    /// The SQL written.
    let dialect: any SQLDialect

    /// Each table's column list under the fetched table's alias (the
    /// first a builder makes), by table name: made once, not per query.
    private let columnLists: [String: String]
    private static let rootAlias = SQLSchema.quote("t0")

    /// A compiler for `schema` writing `dialect`'s SQL.
    package init(schema: SQLSchema, dialect: any SQLDialect) {
        self.schema = schema
        self.dialect = dialect
        var lists: [String: String] = [:]
        for table in schema.tables {
            lists[table.name] = Self.columnList(table, alias: Self.rootAlias)
        }
        columnLists = lists
    }

    /// `alias."A", alias."B", …` for every column of `table`, in order.
    private static func columnList(_ table: SQLSchema.Table, alias: String) -> String {
        table.columns.map { "\(alias).\(SQLSchema.quote($0.name))" }.joined(separator: ", ")
    }

    /// `SELECT t0.Z_PK, t0.Z_ENT …`: the matching rows' primary keys and
    /// entity numbers, sorted and windowed.
    public func primaryKeyQuery(_ fetch: ResolvedFetch) throws(StrataError) -> CompiledQuery {
        try select(fetch) { alias in "\(alias).\(SQLSchema.quote("Z_PK")), \(alias).\(SQLSchema.quote("Z_ENT"))" }
    }

    /// `SELECT t0."Z_PK", t0."Z_ENT", … …`: the matching rows in full (columns in
    /// ``SQLSchema/Table/columns`` order), sorted and windowed.
    public func rowQuery(_ fetch: ResolvedFetch) throws(StrataError) -> CompiledQuery {
        // The columns by name, not `*`: a statement SQLite prepares again
        // (another connection changed the schema) keeps its columns where
        // the decoder found them, or fails if one is gone.
        guard let table = schema.table(for: fetch.entityName) else { return try select(fetch) { alias in "\(alias).*" } }
        let prepared = columnLists[table.name]
        return try select(fetch) { alias in
            alias == Self.rootAlias ? prepared ?? Self.columnList(table, alias: alias) : Self.columnList(table, alias: alias)
        }
    }

    /// `SELECT COUNT(*) …`: how many rows ``primaryKeyQuery(_:)`` returns
    /// (offset and limit included).
    public func countQuery(_ fetch: ResolvedFetch) throws(StrataError) -> CompiledQuery {
        let builder = SQLQueryBuilder(schema: schema, dialect: dialect)
        let (scope, filter) = try builder.filter(fetch)
        var sql = SQLFragment("FROM ") + scope.fromClause() + filter
        if fetch.limit != nil || fetch.offset > 0 {
            sql = "SELECT COUNT(*) FROM (SELECT 1 " + sql + builder.window(fetch) + ") AS \"counted\""
        } else {
            sql = "SELECT COUNT(*) " + sql
        }
        return CompiledQuery(sql: dialect.statement(sql.sql), arguments: sql.arguments, parameters: sql.parameters)
    }

    private func select(_ fetch: ResolvedFetch, columns: (String) -> String) throws(StrataError) -> CompiledQuery {
        let builder = SQLQueryBuilder(schema: schema, dialect: dialect)
        let (scope, filter) = try builder.filter(fetch)
        let order = try builder.orderBy(fetch, scope: scope)
        // The FROM clause is assembled last: compiling the filter and the
        // sort keys adds the LEFT JOINs their key paths need.
        let sql = SQLFragment("SELECT \(columns(scope.alias)) FROM ") + scope.fromClause() + filter + order + builder.window(fetch)
        return CompiledQuery(sql: dialect.statement(sql.sql), arguments: sql.arguments, parameters: sql.parameters)
    }
}
