import Foundation
import PostgresNIO
import StrataModel
import StrataQuery

/// ``SQLValue``s as PostgreSQL binds them: integers `int8`, reals `float8`,
/// decimals `numeric`, text `text`, bytes `bytea`, UUIDs `uuid`.
///
/// PostgreSQL's `text` cannot hold U+0000: such a string is refused with
/// ``StrataError/Code/invalidValue`` (the SQLite store keeps it as bytes;
/// a PostgreSQL store never stores a string it could not give back whole).
package enum PostgresValueCoding {
    /// Appends `value` to `bindings`.
    package static func append(_ value: SQLValue, to bindings: inout PostgresBindings) throws(StrataError) {
        switch value {
        case .null: bindings.appendNull()
        case .integer(let v): bindings.append(v)
        case .real(let d): bindings.append(d)
        case .decimal(let d):
            do { try bindings.append(d) } catch { throw StrataError(.invalidValue, "decimal \(d) cannot be bound as a PostgreSQL numeric: \(error)") }
        case .text(let s):
            guard !SQLValueCoding.containsNUL(s) else {
                throw StrataError(.invalidValue, "a PostgreSQL store cannot hold a string containing U+0000 (PostgreSQL's text cannot)")
            }
            bindings.append(s)
        case .blob(let data):
            do { try bindings.append(data) } catch { throw StrataError(.invalidValue, "\(data.count) bytes cannot be bound as a PostgreSQL bytea: \(error)") }
        case .uuid(let uuid): bindings.append(uuid)
        }
    }

    /// `query` as a PostgreSQL query with its arguments bound.
    package static func query(_ query: CompiledQuery) throws(StrataError) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: query.arguments.count)
        for argument in query.arguments { try append(argument, to: &bindings) }
        return PostgresQuery(unsafeSQL: query.sql, binds: bindings)
    }
}

extension SQLQueryCompiler {
    /// A compiler writing PostgreSQL's SQL over `schema`'s layout.
    package init(postgres schema: PostgresSchema) {
        self.init(schema: schema.layout, dialect: PostgresDialect())
    }
}
