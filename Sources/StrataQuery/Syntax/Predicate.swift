/// A parsed predicate in the NSPredicate format syntax, before it is
/// checked against a model.
///
/// Produced by ``PredicateParser``; turned into a ``QueryPredicate`` by
/// ``PredicateResolver``, which is what evaluators and compilers run.
public indirect enum Predicate: Sendable, Hashable {
    /// `TRUEPREDICATE`.
    case truePredicate
    /// `FALSEPREDICATE`.
    case falsePredicate
    /// `NOT p`, `!p`.
    case not(Predicate)
    /// `a AND b AND …`, `&&`.
    case and([Predicate])
    /// `a OR b OR …`, `||`.
    case or([Predicate])
    /// `lhs op rhs`, optionally quantified with `ANY`/`ALL`/`NONE`.
    case comparison(Comparison)
}

/// `[ANY|ALL|NONE] lhs op[options] rhs`.
public struct Comparison: Sendable, Hashable {
    /// `ANY`/`SOME`, `ALL`, `NONE` or nothing.
    public var quantifier: Quantifier?
    /// The left side.
    public var lhs: Expression
    /// The operator.
    public var op: ComparisonOperator
    /// `[c]`, `[d]`, `[cd]`.
    public var options: StringComparisonOptions
    /// The right side.
    public var rhs: Expression
    /// Where the comparison is in the source.
    public var range: SourceRange

    /// Creates a comparison.
    public init(
        quantifier: Quantifier? = nil,
        lhs: Expression,
        op: ComparisonOperator,
        options: StringComparisonOptions = [],
        rhs: Expression,
        range: SourceRange
    ) {
        self.quantifier = quantifier
        self.lhs = lhs
        self.op = op
        self.options = options
        self.rhs = rhs
        self.range = range
    }
}

/// The aggregate quantifiers of a comparison over a to-many key path.
public enum Quantifier: String, Sendable, Hashable {
    /// `ANY` or `SOME`: at least one element satisfies the comparison.
    case any = "ANY"
    /// `ALL`: every element does (true for an empty collection).
    case all = "ALL"
    /// `NONE`: no element does.
    case none = "NONE"
}

/// Comparison operators.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `<`
    case lessThan = "<"
    /// `<=`, `=<`
    case lessThanOrEqual = "<="
    /// `>`
    case greaterThan = ">"
    /// `>=`, `=>`
    case greaterThanOrEqual = ">="
    /// `=`, `==`
    case equal = "=="
    /// `!=`, `<>`
    case notEqual = "!="
    /// `BETWEEN {lo, hi}`, inclusive.
    case between = "BETWEEN"
    /// `IN {…}`, `IN $list`, `IN toMany.path`.
    case `in` = "IN"
    /// `BEGINSWITH`
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`
    case endsWith = "ENDSWITH"
    /// `CONTAINS`: substring for strings, membership for collections.
    case contains = "CONTAINS"
    /// `LIKE` with `*` and `?` wildcards.
    case like = "LIKE"
    /// `MATCHES`: ICU regular expression over the whole string.
    case matches = "MATCHES"

    /// Whether the operator only applies to strings.
    public var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .like, .matches: true
        default: false
        }
    }
}

/// `[c]`, `[d]`, `[cd]` string comparison modifiers.
public struct StringComparisonOptions: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public var rawValue: UInt8
    /// Creates options from bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `[c]`: case-insensitive.
    public static let caseInsensitive = StringComparisonOptions(rawValue: 1)
    /// `[d]`: diacritic-insensitive.
    public static let diacriticInsensitive = StringComparisonOptions(rawValue: 2)
}

/// An expression: one side of a comparison, a derivation expression, or
/// an element of a literal array.
public indirect enum Expression: Sendable, Hashable {
    /// A literal constant.
    case literal(Literal, SourceRange)
    /// A key path from a base; components may include collection operators
    /// (`@count`, `@sum`, `@avg`, `@min`, `@max`). `SELF` is
    /// `.keyPath(.evaluatedObject, [])`, `$VAR.x` is `.keyPath(.variable("VAR"), ["x"])`.
    case keyPath(KeyPathBase, [String], SourceRange)
    /// `{a, b, c}`.
    case array([Expression], SourceRange)
    /// `CAST(value, "NSDate")` and other casts; the type is the string given.
    case cast(Expression, String, SourceRange)
    /// A function call: `now()`, `canonical:(title)`, `uppercase:(x)`,
    /// `lowercase:(x)`; the name is given without the colon.
    case function(String, [Expression], SourceRange)

    /// Where the expression is in the source.
    public var range: SourceRange {
        switch self {
        case .literal(_, let r), .keyPath(_, _, let r), .array(_, let r), .cast(_, _, let r), .function(_, _, let r): r
        }
    }
}

/// What a key path starts from.
public indirect enum KeyPathBase: Sendable, Hashable {
    /// The object being evaluated (`SELF`, or a bare key path).
    case evaluatedObject
    /// `$NAME`.
    case variable(String)
    /// `SUBQUERY(collection, $var, predicate)`.
    case subquery(Subquery)
}

/// `SUBQUERY(collection, $variable, predicate)`.
public struct Subquery: Sendable, Hashable {
    /// The to-many collection iterated.
    public var collection: Expression
    /// The variable name, without `$`.
    public var variable: String
    /// The predicate each element is tested with.
    public var predicate: Predicate

    /// Creates a subquery.
    public init(collection: Expression, variable: String, predicate: Predicate) {
        self.collection = collection
        self.variable = variable
        self.predicate = predicate
    }
}

/// A literal value, as written.
public enum Literal: Sendable, Hashable {
    /// `nil`, `NULL`.
    case null
    /// `TRUE`, `YES`, `FALSE`, `NO`.
    case boolean(Bool)
    /// A number, kept as written (after removing `+`) so it can become an
    /// exact Decimal, an integer or a Double depending on what it meets.
    /// Hexadecimal (`0x1F`), octal (`0o17`) and binary (`0b101`) are
    /// converted to decimal text by the parser.
    case number(String)
    /// A quoted string, escapes already resolved.
    case string(String)
}
