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
/// - `LIKE`, as a regular expression over the Characters of the stored
///   text (``PostgresLike``): PostgreSQL's own `_` and `%` count code
///   points, the evaluator's `?` and `*` Characters.
/// - `@sum` and `@avg` of Doubles exact and rounded once, of Decimals
///   exact and cut to a Decimal's digits, a Double as a Decimal through
///   its shortest text (`PostgresDialect+Numbers.swift`); `@min`/`@max`
///   of a string folded is the folded copy of the extreme row.
///
/// Refused with ``StrataError/Code/unsupported`` naming the construct,
/// because PostgreSQL has nothing that agrees exactly: `LIKE` or `[c]`/`[d]`
/// of a computed value or with a computed pattern, and other `MATCHES`
/// (`[c]`, patterns outside the subset).
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
            return Self.doubleAsDecimal(expression)
        default:
            return "CAST(" + expression + " AS numeric)"
        }
    }

    package func fold(_ expression: SQLFragment, _ options: StringComparisonOptions) throws(StrataError) -> SQLFragment {
        guard PostgresSchema.foldings.contains(options) else {
            throw StrataError(.unsupported, "the PostgreSQL store keeps no copy of strings folded with options \(options.rawValue)")
        }
        guard expression.arguments.isEmpty, let folded = Self.companionReference(expression.sql, .folded(options)) else {
            throw StrataError(.unsupported, "the PostgreSQL store compares [c]/[d] strings through the folded copies of stored string attributes only; it cannot fold a computed value")
        }
        return SQLFragment(folded)
    }

    /// `"tN"."NAME"` as `"tN"."NAME__F<options>"` (or another companion's
    /// column); nil for anything but a column reference the compiler wrote.
    static func companionReference(_ sql: String, _ companion: PostgresCompanion) -> String? {
        columnReference(sql).map { "\($0.alias).\"\(companion.column($0.column))\"" }
    }

    /// The alias and column of `"tN"."NAME"`; nil for anything else.
    static func columnReference(_ sql: String) -> (alias: Substring, column: String)? {
        // The compiler writes a column as alias.column, both quoted; names
        // are the layout's, which never hold a quote.
        let parts = sql.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2,
              parts.allSatisfy({ $0.count >= 3 && $0.first == "\"" && $0.last == "\"" && $0.dropFirst().dropLast().allSatisfy { $0 != "\"" } })
        else { return nil }
        return (parts[0], String(parts[1].dropFirst().dropLast()))
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

    /// The units of the (folded) subject, kept beside its column, against
    /// the pattern as ``PostgresLike`` writes it:
    /// `COALESCE("tN"."NAME__L<options>", <folded subject>) ~ '^…$'`. A
    /// constant pattern is translated here; a stored string attribute's is
    /// translated by PostgreSQL from its own units, row by row
    /// (``PostgresLike/regexSQL(units:)``). A computed subject or pattern is
    /// refused.
    package func like(_ subject: SQLFragment, _ pattern: SQLFragment, options: StringComparisonOptions) throws(StrataError) -> SQLFragment {
        guard subject.arguments.isEmpty, let units = Self.companionReference(subject.sql, .likeUnits(options)) else {
            throw StrataError(.unsupported, "the PostgreSQL store compiles LIKE on stored string attributes only (it matches the copies it keeps beside them); it cannot match a computed value")
        }
        let folded = options.isEmpty ? subject : try fold(subject, options)
        let regex: SQLFragment
        if let text = Self.constantText(pattern) {
            regex = .bind(.text(PostgresLike.regex(text)))
        } else if pattern.arguments.isEmpty, let patternUnits = Self.likeUnits(ofFolded: pattern.sql, options) {
            regex = SQLFragment(PostgresLike.regexSQL(units: patternUnits))
        } else {
            throw StrataError(.unsupported, "the PostgreSQL store compiles LIKE with a constant pattern or a stored string attribute's, not a computed one")
        }
        return "(COALESCE(" + SQLFragment(units) + ", " + folded + ") ~ " + regex + ")"
    }

    /// The units of a stored string column already folded with `options`
    /// (`"tN"."NAME"`, or `"tN"."NAME__F<options>"`):
    /// `COALESCE("tN"."NAME__L<options>", …)`.
    static func likeUnits(ofFolded sql: String, _ options: StringComparisonOptions) -> String? {
        guard let (alias, column) = columnReference(sql) else { return nil }
        let suffix = options.isEmpty ? "" : String(PostgresSchema.foldedColumn("", options))
        guard column.hasSuffix(suffix), column.count > suffix.count else { return nil }
        let base = String(column.dropLast(suffix.count))
        return "COALESCE(\(alias).\"\(PostgresSchema.likeColumn(base, options))\", \(sql))"
    }

    /// The text of a bound constant; nil for anything else.
    private static func constantText(_ fragment: SQLFragment) -> String? {
        guard fragment.sql == "?", fragment.parameters.isEmpty, fragment.arguments.count == 1, case .text(let text) = fragment.arguments[0] else { return nil }
        return text
    }

    /// `subject ~ '^(?:pattern)$'` for a constant pattern in the subset
    /// both dialects read alike (``PostgresRegex``); `[c]` and a pattern
    /// that is not a constant are refused.
    package func matches(_ subject: SQLFragment, _ pattern: SQLFragment, caseInsensitive: Bool) throws(StrataError) -> SQLFragment {
        guard !caseInsensitive else {
            throw StrataError(.unsupported, "the PostgreSQL store does not compile MATCHES[c]: PostgreSQL's case-insensitive matching in the C collation folds ASCII letters only, ICU's every letter")
        }
        guard let text = Self.constantText(pattern) else {
            throw StrataError(.unsupported, "the PostgreSQL store compiles MATCHES with a constant pattern only (not a variable or a key path): it checks that PostgreSQL reads the pattern as ICU does")
        }
        return "(" + subject + " ~ " + SQLFragment.bind(.text(try PostgresRegex.wholeString(text))) + ")"
    }

    package func stringOrdering(_ lhs: SQLFragment, _ op: String, _ rhs: SQLFragment, constantSide: SQLConstantSide) -> SQLFragment {
        "(" + lhs + " COLLATE \"C\" \(op) " + rhs + ")"
    }

    package func doubleSum(_ column: String) -> String {
        Self.exactDoubleSum(column)
    }

    package func doubleAverage(_ column: String) -> String {
        Self.exactDoubleAverage(column)
    }

    package func integerSum(_ column: String) -> String {
        "COALESCE(CAST(SUM(\(column)) AS bigint), 0)"
    }

    package func decimalSum(_ column: String) -> String {
        Self.decimalSum(column)
    }

    package func decimalAverage(_ column: String) -> String {
        Self.decimalAverage(column)
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

    /// The folded copy of the row holding the extreme string: the strings
    /// that tie hold the same copy.
    package func foldedExtremum(_ function: String, _ column: String, _ options: StringComparisonOptions, from: SQLFragment) throws(StrataError) -> SQLFragment {
        guard let folded = Self.companionReference(column, .folded(options)) else {
            throw StrataError(.unsupported, "the PostgreSQL store compares [c]/[d] strings through the folded copies of stored string attributes only; it cannot fold a computed value")
        }
        let order = function == "MIN" ? "ASC" : "DESC"
        return "(SELECT \(folded) " + from + " AND \(column) IS NOT NULL ORDER BY \(column) COLLATE \"C\" \(order) LIMIT 1)"
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
