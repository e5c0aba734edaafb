import StrataModel
import StrataQuery

/// SQLite's SQL for ``SQLQueryCompiler``: folding, string operators,
/// `LIKE`, `MATCHES` and exact aggregates through ``SQLiteFunctions``
/// (registered on every connection the store opens); decimals compared as
/// their ``DecimalKey`` text; text holding U+0000, stored as a BLOB,
/// ordered by its bytes.
package struct SQLiteDialect: SQLDialect {
    /// The dialect.
    package init() {}

    package var trueLiteral: String { "1" }
    package var falseLiteral: String { "0" }
    package var nullSafeEqual: String { " IS " }
    package var nullSafeNotEqual: String { " IS NOT " }

    package func integerAsDouble(_ expression: SQLFragment) -> SQLFragment {
        "CAST(" + expression + " AS REAL)"
    }

    package func asDecimal(_ expression: SQLFragment, from type: AttributeType) -> SQLFragment {
        "strata_decimal_key(" + expression + ")"
    }

    package func fold(_ expression: SQLFragment, _ options: StringComparisonOptions) -> SQLFragment {
        "strata_fold(" + expression + ", \(options.rawValue))"
    }

    package func stringOperator(_ op: StringOperators.Operator, _ subject: SQLFragment, _ needle: SQLFragment) -> SQLFragment {
        "strata_strop(\(op.rawValue), " + subject + ", " + needle + ")"
    }

    package func foldedExtremum(_ function: String, _ column: String, _ options: StringComparisonOptions, from: SQLFragment) -> SQLFragment {
        fold("(SELECT " + SQLFragment(extremum(function, column, type: .string)) + " " + from + ")", options)
    }

    package func like(_ subject: SQLFragment, _ pattern: SQLFragment, options: StringComparisonOptions) -> SQLFragment {
        "strata_like(" + (options.isEmpty ? subject : fold(subject, options)) + ", " + pattern + ")"
    }

    package func matches(_ subject: SQLFragment, _ pattern: SQLFragment, caseInsensitive: Bool) -> SQLFragment {
        "strata_matches(" + subject + ", " + pattern + ", \(caseInsensitive ? 1 : 0))"
    }

    /// Text holding U+0000 is stored and bound as a BLOB, which SQLite
    /// orders after all TEXT; such values are compared as their bytes
    /// (`CAST(… AS BLOB)`). Against a constant without U+0000 the TEXT rows
    /// keep the plain comparison, so an index on the column still serves
    /// it: BLOB rows (`>= x''`) are a range of their own in the index.
    package func stringOrdering(_ lhs: SQLFragment, _ op: String, _ rhs: SQLFragment, constantSide: SQLConstantSide) -> SQLFragment {
        let bytewise = "CAST(" + lhs + " AS BLOB) \(op) CAST(" + rhs + " AS BLOB)"
        let (column, constant, columnOp): (SQLFragment, SQLFragment, String)
        switch constantSide {
        case .right: (column, constant, columnOp) = (lhs, rhs, op)
        case .left: (column, constant, columnOp) = (rhs, lhs, Self.flipped(op))
        case .neither: return bytewise.parenthesized
        }
        guard constant.arguments.count == 1, case .text(let value) = constant.arguments[0], !SQLValueCoding.containsNUL(value) else {
            // A constant holding U+0000 (a BLOB): bytes on both sides.
            return bytewise.parenthesized
        }
        let text = "(" + column + " \(columnOp) " + constant + " AND " + column + " < x'')"
        let blobs = "(" + column + " >= x'' AND CAST(" + column + " AS BLOB) \(columnOp) CAST(" + constant + " AS BLOB))"
        return (text + " OR " + blobs).parenthesized
    }

    /// `a op b` as `b flipped(op) a`.
    static func flipped(_ op: String) -> String {
        switch op {
        case "<": ">"
        case "<=": ">="
        case ">": "<"
        case ">=": "<="
        default: op
        }
    }

    package func doubleSum(_ column: String) -> String {
        "strata_fsum(\(column))"
    }

    /// SQLite answers NULL for a division by 0 (no values).
    package func doubleAverage(_ column: String) -> String {
        doubleSum(column) + " / COUNT(\(column))"
    }

    /// SQLite's SUM of integers fails on overflow already.
    package func integerSum(_ column: String) -> String {
        "COALESCE(SUM(\(column)), 0)"
    }

    package func decimalSum(_ column: String) -> String {
        "strata_decimal_sum(\(column))"
    }

    package func decimalAverage(_ column: String) -> String {
        "strata_decimal_avg(\(column))"
    }

    /// SQLite orders every stored form in the evaluator's order (BLOBs
    /// bytewise, decimal keys as numbers).
    package func extremum(_ function: String, _ column: String, type: AttributeType) -> String {
        "\(function)(\(column))"
    }

    /// SQLite puts NULL first ascending and last descending already.
    package func orderTerm(_ expression: String, ascending: Bool) -> String {
        expression + (ascending ? " ASC" : " DESC")
    }

    package var unlimited: String { " LIMIT -1" }

    package func statement(_ sql: String) -> String { sql }
}

extension SQLQueryCompiler {
    /// A compiler writing SQLite's SQL over `schema`, for a connection with
    /// ``SQLiteFunctions`` registered.
    public init(schema: SQLSchema) {
        self.init(schema: schema, dialect: SQLiteDialect())
    }
}
