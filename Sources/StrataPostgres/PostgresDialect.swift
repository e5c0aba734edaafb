import StrataModel
import StrataQuery

/// PostgreSQL's SQL for ``SQLQueryCompiler``, agreeing with
/// ``PredicateEvaluator`` wherever it writes anything:
///
/// - Strings are `text COLLATE "C"`: ordered and compared by code point,
///   which for UTF-8 is the evaluator's byte order. `[c]`, `[d]` and
///   `[cd]` read the folded copies the store keeps beside each string
///   column (``PostgresSchema/foldedColumn(_:_:)``), filled with
///   ``StringFolding/fold(_:_:)``, the evaluator's own function; folding
///   anything but a stored column is refused.
/// - `BEGINSWITH`, `ENDSWITH`, `CONTAINS` are `starts_with`, a `right`
///   of the needle's length, `strpos`: code points, which on UTF-8 is the
///   evaluator's byte matching.
/// - A Double compared as a Decimal goes through its shortest text
///   (`extra_float_digits` = 1 on every connection), as
///   ``DecimalConversion`` converts it; an integer is cast exactly.
/// - NULL sorts first ascending and last descending (`NULLS FIRST` /
///   `NULLS LAST`), as the evaluator sorts.
/// - Bound values are written `$1`, `$2`…
///
/// Refused with ``StrataError/Code/unsupported`` naming the construct,
/// because PostgreSQL has nothing that agrees exactly: `LIKE` (its `_`
/// and `%` count code points, the evaluator's `?` and `*` Characters),
/// `MATCHES` (PostgreSQL's regular expressions are not ICU's), the exact
/// sum and average of Double values, and the average of Decimal values.
package struct PostgresDialect: SQLDialect {
    /// The dialect.
    package init() {}

    package var trueLiteral: String { "TRUE" }
    package var falseLiteral: String { "FALSE" }
    package var nullSafeEqual: String { " IS NOT DISTINCT FROM " }
    package var nullSafeNotEqual: String { " IS DISTINCT FROM " }

    package func integerAsDouble(_ expression: SQLFragment) -> SQLFragment {
        "CAST(" + expression + " AS double precision)"
    }

    package func asDecimal(_ expression: SQLFragment, from type: AttributeType) -> SQLFragment {
        switch type {
        case .double, .float:
            // The shortest text that reads back as the same Double, as
            // DecimalConversion reads Swift's description.
            "CAST(CAST(" + expression + " AS text) AS numeric)"
        default:
            "CAST(" + expression + " AS numeric)"
        }
    }

    package func fold(_ expression: SQLFragment, _ options: StringComparisonOptions) throws(StrataError) -> SQLFragment {
        guard expression.arguments.isEmpty, let folded = Self.foldedColumnReference(expression.sql, options) else {
            throw StrataError(.unsupported, "the PostgreSQL store compares [c]/[d] strings through the folded copies of stored string attributes only; it cannot fold a computed value")
        }
        return SQLFragment(folded)
    }

    /// `"tN"."NAME"` as `"tN"."NAME__F<options>"`; nil for anything but a
    /// column reference the compiler wrote.
    static func foldedColumnReference(_ sql: String, _ options: StringComparisonOptions) -> String? {
        // The compiler writes a column as alias.column, both quoted; names
        // are the layout's, which never hold a quote.
        let parts = sql.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2,
              parts.allSatisfy({ $0.count >= 3 && $0.first == "\"" && $0.last == "\"" && $0.dropFirst().dropLast().allSatisfy { $0 != "\"" } })
        else { return nil }
        let column = String(parts[1].dropFirst().dropLast())
        return "\(parts[0]).\"\(PostgresSchema.foldedColumn(column, options))\""
    }

    package func stringOperator(_ op: StringOperators.Operator, _ subject: SQLFragment, _ needle: SQLFragment) -> SQLFragment {
        switch op {
        case .beginsWith:
            return "starts_with(" + subject + ", " + needle + ")"
        case .endsWith:
            // NULL when either is NULL, as starts_with and strpos are.
            return "(right(" + subject + ", length(" + needle + ")) = " + needle + ")"
        case .contains:
            return "(strpos(" + subject + ", " + needle + ") > 0)"
        }
    }

    package func like(_ subject: SQLFragment, _ pattern: SQLFragment) throws(StrataError) -> SQLFragment {
        throw StrataError(.unsupported, "the PostgreSQL store does not compile LIKE: PostgreSQL's wildcards count code points where Strata's count Characters")
    }

    package func matches(_ subject: SQLFragment, _ pattern: SQLFragment, caseInsensitive: Bool) throws(StrataError) -> SQLFragment {
        throw StrataError(.unsupported, "the PostgreSQL store does not compile MATCHES: PostgreSQL's regular expressions are not ICU's")
    }

    package func stringOrdering(_ lhs: SQLFragment, _ op: String, _ rhs: SQLFragment, constantSide: SQLConstantSide) -> SQLFragment {
        "(" + lhs + " COLLATE \"C\" \(op) " + rhs + ")"
    }

    package func doubleSum(_ column: String) throws(StrataError) -> String {
        throw StrataError(.unsupported, "the PostgreSQL store does not compile @sum or @avg of Double values: PostgreSQL's sum is not exact")
    }

    package func decimalSum(_ column: String) -> String {
        "COALESCE(SUM(\(column)), 0)"
    }

    package func decimalAverage(_ column: String) throws(StrataError) -> String {
        throw StrataError(.unsupported, "the PostgreSQL store does not compile @avg of Decimal values: PostgreSQL rounds numeric division differently")
    }

    /// PostgreSQL has no `MIN`/`MAX` of `uuid` or `bytea`: those go through
    /// their lowercase hexadecimal text, whose code-point order is their
    /// byte order (a prefix first), and back.
    package func extremum(_ function: String, _ column: String, type: AttributeType) -> String {
        switch type {
        case .uuid:
            "CAST(\(function)(CAST(\(column) AS text) COLLATE \"C\") AS uuid)"
        case .binary, .transformable, .undefined, .composite:
            "decode(\(function)(encode(\(column), 'hex') COLLATE \"C\"), 'hex')"
        default:
            "\(function)(\(column))"
        }
    }

    package func integerAverage(_ column: String) -> String {
        "CAST(SUM(\(column)) AS double precision) / COUNT(\(column))"
    }

    package func orderTerm(_ expression: String, ascending: Bool) -> String {
        expression + (ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST")
    }

    package var unlimited: String { "" }

    /// Each `?` outside quoted identifiers and string literals becomes
    /// `$1`, `$2`… in order.
    package func statement(_ sql: String) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
                result.append(character)
            } else if character == "\"" || character == "'" {
                quote = character
                result.append(character)
            } else if character == "?" {
                number += 1
                result += "$\(number)"
            } else {
                result.append(character)
            }
        }
        return result
    }
}
