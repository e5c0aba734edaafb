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
        sql.contains("strata_matches(")
    }

    /// The arguments as GRDB statement arguments.
    public var statementArguments: StatementArguments {
        StatementArguments(arguments)
    }
}
