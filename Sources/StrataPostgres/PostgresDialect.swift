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
/// - An integer compared as a Decimal is cast exactly; an integer `@sum`
///   stays a `bigint`, so that an overflow is an error as in the evaluator.
/// - NULL sorts first ascending and last descending (`NULLS FIRST` /
///   `NULLS LAST`), as the evaluator sorts.
/// - Bound values are written `$1`, `$2`…
/// - `MATCHES` with a constant pattern in the subset ICU and PostgreSQL
///   read alike (``PostgresRegex``), as `~ '^(?:…)$'`.
///
/// Refused with ``StrataError/Code/unsupported`` naming the construct,
/// because PostgreSQL has nothing that agrees exactly: `LIKE` (its `_`
/// and `%` count code points, the evaluator's `?` and `*` Characters),
/// other `MATCHES` (`[c]`, patterns outside the subset), the exact
/// sum and average of Double values, a Double compared as a Decimal
/// (``DecimalConversion`` gives nil outside Decimal's exponents, which
/// PostgreSQL's `numeric` has), and the sum and average of Decimal values
/// (Decimal rounds past 38 digits; `numeric` is exact).
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

    package func asDecimal(_ expression: SQLFragment, from type: AttributeType) throws(StrataError) -> SQLFragment {
        switch type {
        case .double, .float:
            throw StrataError(.unsupported, "the PostgreSQL store does not compare a Double as a Decimal: Strata has no Decimal for Doubles outside Decimal's exponents, PostgreSQL's numeric does")
        default:
            return "CAST(" + expression + " AS numeric)"
        }
    }

    package func fold(_ expression: SQLFragment, _ options: StringComparisonOptions) throws(StrataError) -> SQLFragment {
        guard PostgresSchema.foldings.contains(options) else {
            throw StrataError(.unsupported, "the PostgreSQL store keeps no copy of strings folded with options \(options.rawValue)")
        }
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

    /// `subject ~ '^(?:pattern)$'` for a constant pattern in the subset
    /// both dialects read alike (``PostgresRegex``); `[c]` and a pattern
    /// that is not a constant are refused.
    package func matches(_ subject: SQLFragment, _ pattern: SQLFragment, caseInsensitive: Bool) throws(StrataError) -> SQLFragment {
        guard !caseInsensitive else {
            throw StrataError(.unsupported, "the PostgreSQL store does not compile MATCHES[c]: PostgreSQL's case-insensitive matching in the C collation folds ASCII letters only, ICU's every letter")
        }
        guard pattern.sql == "?", pattern.parameters.isEmpty, pattern.arguments.count == 1, case .text(let text) = pattern.arguments[0] else {
            throw StrataError(.unsupported, "the PostgreSQL store compiles MATCHES with a constant pattern only (not a variable or a key path): it checks that PostgreSQL reads the pattern as ICU does")
        }
        return "(" + subject + " ~ " + SQLFragment.bind(.text(try PostgresRegex.wholeString(text))) + ")"
    }

    package func stringOrdering(_ lhs: SQLFragment, _ op: String, _ rhs: SQLFragment, constantSide: SQLConstantSide) -> SQLFragment {
        "(" + lhs + " COLLATE \"C\" \(op) " + rhs + ")"
    }

    package func doubleSum(_ column: String) throws(StrataError) -> String {
        throw StrataError(.unsupported, "the PostgreSQL store does not compile @sum or @avg of Double values: PostgreSQL's sum is not exact")
    }

    package func integerSum(_ column: String) -> String {
        "COALESCE(CAST(SUM(\(column)) AS bigint), 0)"
    }

    package func decimalSum(_ column: String) throws(StrataError) -> String {
        throw StrataError(.unsupported, "the PostgreSQL store does not compile @sum of Decimal values: Decimal rounds past 38 digits where PostgreSQL's numeric is exact")
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

    package func orderTerm(_ expression: String, ascending: Bool) -> String {
        expression + (ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST")
    }

    package var unlimited: String { "" }

    /// Each `?` outside quoted identifiers and string literals becomes
    /// `$1`, `$2`… in order. Scanned as UTF-8 bytes: the three are ASCII,
    /// and a quote is never merged with a neighbouring scalar.
    package func statement(_ sql: String) -> String {
        var result: [UInt8] = []
        result.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        var quote: UInt8?
        for byte in sql.utf8 {
            if let open = quote {
                if byte == open { quote = nil }
                result.append(byte)
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
                result.append(byte)
            } else if byte == UInt8(ascii: "?") {
                number += 1
                result += Array("$\(number)".utf8)
            } else {
                result.append(byte)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
