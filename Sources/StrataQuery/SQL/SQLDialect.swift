import StrataModel

/// What differs between the SQL databases the compiler writes for: how a
/// value is converted into a comparison domain, how strings are folded,
/// matched and ordered, the exact aggregates, sort order of NULL, and how
/// bound values are written in the statement. ``SQLQueryCompiler`` writes
/// everything else (joins, subqueries, two-valued logic, windows) once.
///
/// Each backend's module has its dialect: StrataSQLite's `SQLiteDialect`
/// (the functions of `SQLiteFunctions`, registered on every connection).
/// A dialect throws ``StrataError/Code/unsupported`` naming a construct it
/// cannot write so that it agrees with ``PredicateEvaluator``.
package protocol SQLDialect: Sendable {
    /// A condition that is always true (SQLite's `1`, PostgreSQL's `TRUE`).
    var trueLiteral: String { get }

    /// A condition that is always false.
    var falseLiteral: String { get }

    /// Equality that is true for two NULLs and false for one (` IS `,
    /// ` IS NOT DISTINCT FROM `), with its spaces.
    var nullSafeEqual: String { get }

    /// Its negation (` IS NOT `, ` IS DISTINCT FROM `).
    var nullSafeNotEqual: String { get }

    /// A 64-bit integer as the Double domain compares it (`Double(x)`).
    func integerAsDouble(_ expression: SQLFragment) -> SQLFragment

    /// A number of `type` (not Decimal) as the Decimal domain compares it
    /// (``DecimalConversion``).
    func asDecimal(_ expression: SQLFragment, from type: AttributeType) throws(StrataError) -> SQLFragment

    /// A string folded with `options` (never empty), as
    /// ``StringFolding/fold(_:_:)`` folds it.
    func fold(_ expression: SQLFragment, _ options: StringComparisonOptions) throws(StrataError) -> SQLFragment

    /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS` of two (already folded) strings:
    /// true, false, or NULL when either is NULL.
    func stringOperator(_ op: StringOperators.Operator, _ subject: SQLFragment, _ needle: SQLFragment) throws(StrataError) -> SQLFragment

    /// `LIKE` (``LikePattern``: `*` and `?`, whole string) of `subject`
    /// folded with `options` (not yet folded: a dialect may keep what it
    /// matches elsewhere) against `pattern` (already folded).
    func like(_ subject: SQLFragment, _ pattern: SQLFragment, options: StringComparisonOptions) throws(StrataError) -> SQLFragment

    /// `MATCHES` (``RegexCache``: whole string).
    func matches(_ subject: SQLFragment, _ pattern: SQLFragment, caseInsensitive: Bool) throws(StrataError) -> SQLFragment

    /// `lhs op rhs` for strings (`op` one of `<`, `<=`, `>`, `>=`), in the
    /// evaluator's order (UTF-8 bytes); `constantSide` says which side is a
    /// bound constant, if one is.
    func stringOrdering(_ lhs: SQLFragment, _ op: String, _ rhs: SQLFragment, constantSide: SQLConstantSide) -> SQLFragment

    /// The exact sum of a Double column's non-NULL values (0.0 when none),
    /// as ``ExactDoubleSum`` adds them.
    func doubleSum(_ column: String) throws(StrataError) -> String

    /// ``doubleSum(_:)`` divided by the count of non-NULL values, in Double
    /// arithmetic (NULL when none), as the evaluator averages.
    func doubleAverage(_ column: String) throws(StrataError) -> String

    /// The sum of an integer column's non-NULL values (0 when none); an
    /// overflow of 64 bits is an error, as in the evaluator.
    func integerSum(_ column: String) -> String

    /// The sum of a Decimal column's non-NULL values (0 when none).
    func decimalSum(_ column: String) throws(StrataError) -> String

    /// The average of a Decimal column's non-NULL values (NULL when none).
    func decimalAverage(_ column: String) throws(StrataError) -> String

    /// `MIN` or `MAX` (`function`) of a column of `type`'s non-NULL values,
    /// in the evaluator's order, as the column's own type.
    func extremum(_ function: String, _ column: String, type: AttributeType) -> String

    /// `@min` or `@max` (`function`) of a string column, folded with
    /// `options` (never empty): the folded copy of the extreme string (not
    /// the extreme of the folded strings), as a scalar subquery over `from`
    /// (`FROM … WHERE …`).
    func foldedExtremum(_ function: String, _ column: String, _ options: StringComparisonOptions, from: SQLFragment) throws(StrataError) -> SQLFragment

    /// One `ORDER BY` term, NULL first ascending and last descending (the
    /// evaluator's order).
    func orderTerm(_ expression: String, ascending: Bool) -> String

    /// What follows the filter for `OFFSET` without `LIMIT` ("" when the
    /// database needs nothing).
    var unlimited: String { get }

    /// The final statement text from the compiler's, whose bound values
    /// are written `?` in order.
    func statement(_ sql: String) -> String
}

/// Which side of a comparison is a bound constant, if exactly one is.
package enum SQLConstantSide: Sendable {
    /// The left side.
    case left
    /// The right side.
    case right
    /// Neither side, or both.
    case neither
}
