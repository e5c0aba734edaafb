/// SQL text with its bound arguments, in order. Every value of a predicate,
/// window or entity restriction is an argument; the text holds only
/// quoted identifiers, SQL keywords and the compiler's own constants.
public struct CompiledQuery: Sendable, Hashable {
    /// The statement.
    public let sql: String
    /// One value per `?`, in order.
    public var arguments: [SQLValue]
    /// The arguments bound from a variable's value: each comparison side
    /// written as exactly `$NAME` (``QueryComparison/rhsVariable``) whose
    /// SQL does not depend on the value (`==` and `!=`; `<`, `<=`, `>`,
    /// `>=` outside the string domains).
    public var parameters: [QueryParameter]

    /// Creates a query.
    public init(sql: String, arguments: [SQLValue], parameters: [QueryParameter] = []) {
        self.sql = sql
        self.arguments = arguments
        self.parameters = parameters
        matchesRegularExpressions = Self.callsRegularExpressions(sql)
        sqlHash = sql.hashValue
    }

    /// Whether every use of a variable in `predicate` (every `$NAME` in
    /// its text, told apart by position) is bound as a parameter: then the
    /// statement is the same for any values of those variables of the
    /// kinds compiled with, and ``rebinding(_:)`` makes the query for other
    /// values. A use the compiler copied (one SQL expression written twice)
    /// is two parameters of one use, which is fine; a use written into the
    /// SQL text or its arguments is none, and the statement does not bind
    /// every variable. Uses that cannot be told apart (a predicate built
    /// without positions) never bind.
    public func bindsEveryVariable(of predicate: Predicate?) -> Bool {
        var uses: [VariableUse] = []
        predicate?.collectVariableUses(into: &uses)
        let distinct = Set(uses)
        guard distinct.count == uses.count else { return false }
        return distinct == Set(parameters.map(\.use))
    }

    /// This query with its parameters bound from `variables`, converted as
    /// the resolver and the compiler convert a constant; nil when one of
    /// them is not a single value that binds to a non-NULL argument (then
    /// the fetch must be compiled afresh, which also reports its errors).
    /// Only for a query that ``bindsEveryVariable(of:)`` and `variables`
    /// of the kinds it was compiled with.
    public func rebinding(_ variables: [String: VariableValue]) -> CompiledQuery? {
        var result = self
        for parameter in parameters {
            guard case .value(let value)? = variables[parameter.use.name],
                  let converted = try? PredicateResolver.coerce(.value(value), to: parameter.domain, range: SourceRange(start: 0, end: 0)),
                  let bound = try? SQLQueryBuilder.boundConstant(converted, parameter.domain, parameter.options),
                  parameter.index < result.arguments.count else { return nil }
            result.arguments[parameter.index] = bound
        }
        return result
    }

    /// Whether the statement matches regular expressions
    /// (`strata_matches`): one step of it can take any time, so callers
    /// that must not wait long do not run it. Found once, when the query
    /// is made: callers ask it on every read of a kept statement.
    public let matchesRegularExpressions: Bool

    /// `sql.hashValue`, found once when the query is made, for caches
    /// keyed by the statement's text that a kept query is looked up in on
    /// every run (hashing a few hundred bytes of SQL each time costs about
    /// as much as reading a row). Like every `hashValue`, it holds within
    /// this process only: never store it or send it.
    public let sqlHash: Int

    /// Whether `sql` calls `strata_matches`.
    private static func callsRegularExpressions(_ sql: String) -> Bool {
        // A byte scan written out: Foundation's `String.contains` costs a
        // microsecond here, and the standard library's generic
        // `Collection.contains` (unspecialized across modules) far more.
        let needle = regularExpressionCall
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

    /// This query with NULL for each parameter's argument: what a cache
    /// keeps, holding no caller's value (``rebinding(_:)`` sets them all).
    public var withoutParameterValues: CompiledQuery {
        var result = self
        for parameter in parameters where parameter.index < result.arguments.count {
            result.arguments[parameter.index] = .null
        }
        return result
    }
}

/// An argument of a ``CompiledQuery`` bound from a variable.
public struct QueryParameter: Sendable, Hashable {
    /// Its index in ``CompiledQuery/arguments``.
    public var index: Int
    /// The use of the variable it is bound from.
    public var use: VariableUse
    /// The domain its value is converted to.
    public var domain: ComparisonDomain
    /// The folding applied to it (string domains).
    public var options: StringComparisonOptions
}
