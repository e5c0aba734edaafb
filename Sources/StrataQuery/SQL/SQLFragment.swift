/// A piece of SQL with the arguments of its `?` placeholders, in order;
/// concatenation keeps text and arguments aligned.
package struct SQLFragment: Sendable {
    package var sql: String
    package var arguments: [SQLValue]
    /// The arguments bound from variables (their indexes in `arguments`).
    package var parameters: [QueryParameter] = []

    package init(_ sql: String, _ arguments: [SQLValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// A single `?` bound to `value`.
    package static func bind(_ value: SQLValue) -> SQLFragment {
        SQLFragment("?", [value])
    }

    package static func + (a: SQLFragment, b: SQLFragment) -> SQLFragment {
        var result = a
        result += b
        return result
    }

    package static func + (a: SQLFragment, b: String) -> SQLFragment {
        var result = a
        result.sql += b
        return result
    }

    package static func + (a: String, b: SQLFragment) -> SQLFragment {
        var result = b
        result.sql = a + b.sql
        return result
    }

    package static func += (a: inout SQLFragment, b: SQLFragment) {
        if !b.parameters.isEmpty {
            let shift = a.arguments.count
            a.parameters += b.parameters.map { parameter in
                var shifted = parameter
                shifted.index += shift
                return shifted
            }
        }
        a.sql += b.sql
        a.arguments += b.arguments
    }

    package static func += (a: inout SQLFragment, b: String) {
        a.sql += b
    }

    /// `parts` joined by `separator`.
    package static func joined(_ parts: [SQLFragment], separator: String) -> SQLFragment {
        var result = SQLFragment("")
        for (i, part) in parts.enumerated() {
            if i > 0 { result.sql += separator }
            result += part
        }
        return result
    }

    /// `parts` joined by `separator` (an associative operator, ` AND ` or
    /// ` OR `) as a balanced tree of parenthesized groups of at most
    /// eight: SQLite parses a flat chain as a tree as deep as it is long
    /// and refuses one deeper than its expression-depth limit (1000), so
    /// a thousand OR-ed terms would fail; balanced, they nest about
    /// log₈(n) deep.
    package static func balanced(_ parts: ArraySlice<SQLFragment>, separator: String) -> SQLFragment {
        if parts.count == 1, let only = parts.first { return only }
        if parts.count <= 8 { return joined(Array(parts), separator: separator).parenthesized }
        let groupSize = (parts.count + 7) / 8
        var groups: [SQLFragment] = []
        var start = parts.startIndex
        while start < parts.endIndex {
            let end = Swift.min(start + groupSize, parts.endIndex)
            groups.append(balanced(parts[start..<end], separator: separator))
            start = end
        }
        return balanced(groups[...], separator: separator)
    }

    /// `(self)`.
    package var parenthesized: SQLFragment { "(" + self + ")" }
}
