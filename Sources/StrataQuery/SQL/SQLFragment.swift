import GRDB

/// A piece of SQL with the arguments of its `?` placeholders, in order;
/// concatenation keeps text and arguments aligned.
struct SQLFragment: Sendable {
    var sql: String
    var arguments: [DatabaseValue]

    init(_ sql: String, _ arguments: [DatabaseValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// A single `?` bound to `value`.
    static func bind(_ value: DatabaseValue) -> SQLFragment {
        SQLFragment("?", [value])
    }

    static func + (a: SQLFragment, b: SQLFragment) -> SQLFragment {
        SQLFragment(a.sql + b.sql, a.arguments + b.arguments)
    }

    static func + (a: SQLFragment, b: String) -> SQLFragment {
        SQLFragment(a.sql + b, a.arguments)
    }

    static func + (a: String, b: SQLFragment) -> SQLFragment {
        SQLFragment(a + b.sql, b.arguments)
    }

    static func += (a: inout SQLFragment, b: SQLFragment) {
        a.sql += b.sql
        a.arguments += b.arguments
    }

    static func += (a: inout SQLFragment, b: String) {
        a.sql += b
    }

    /// `parts` joined by `separator`.
    static func joined(_ parts: [SQLFragment], separator: String) -> SQLFragment {
        var result = SQLFragment("")
        for (i, part) in parts.enumerated() {
            if i > 0 { result.sql += separator }
            result += part
        }
        return result
    }

    /// `(self)`.
    var parenthesized: SQLFragment { "(" + self + ")" }
}
