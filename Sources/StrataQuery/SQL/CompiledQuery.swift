import GRDB

/// SQL text with its bound arguments, in order. Every value of a predicate,
/// window or entity restriction is an argument; the text holds only
/// quoted identifiers, SQL keywords and the compiler's own constants.
public struct CompiledQuery: Sendable, Hashable {
    /// The statement.
    public var sql: String
    /// One value per `?`, in order.
    public var arguments: [DatabaseValue]

    /// Creates a query.
    public init(sql: String, arguments: [DatabaseValue]) {
        self.sql = sql
        self.arguments = arguments
    }

    /// Whether the statement matches regular expressions
    /// (`strata_matches`): one step of it can take any time, so callers
    /// that must not wait long do not run it.
    public var matchesRegularExpressions: Bool {
        // A byte scan: Foundation's `contains` costs a microsecond here.
        let needle = Self.regularExpressionCall
        return sql.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count >= needle.count else { return false }
            var i = 0
            let last = bytes.count - needle.count
            while i <= last {
                if bytes[i] == needle[0] {
                    var j = 1
                    while j < needle.count, bytes[i + j] == needle[j] { j += 1 }
                    if j == needle.count { return true }
                }
                i += 1
            }
            return false
        } ?? sql.contains("strata_matches(")
    }

    private static let regularExpressionCall = Array("strata_matches(".utf8)

    /// The arguments as GRDB statement arguments.
    public var statementArguments: StatementArguments {
        StatementArguments(arguments)
    }
}
