/// One token of a predicate format string, produced by ``PredicateLexer``.
struct Token: Sendable, Hashable {
    /// The reserved words of the NSPredicate format syntax. They are
    /// case-insensitive; a key with one of these names must be written with
    /// a leading `#` (`#IN`).
    enum Keyword: String, Sendable, Hashable, CaseIterable {
        case and = "AND"
        case or = "OR"
        case not = "NOT"
        case truePredicate = "TRUEPREDICATE"
        case falsePredicate = "FALSEPREDICATE"
        case between = "BETWEEN"
        case `in` = "IN"
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"
        case matches = "MATCHES"
        case any = "ANY"
        case some = "SOME"
        case all = "ALL"
        case none = "NONE"
        case `self` = "SELF"
        case subquery = "SUBQUERY"
        case cast = "CAST"
        case `true` = "TRUE"
        case yes = "YES"
        case `false` = "FALSE"
        case no = "NO"
        case `nil` = "NIL"
        case null = "NULL"
        case function = "FUNCTION"
        case anyKey = "ANYKEY"
        case first = "FIRST"
        case last = "LAST"
        case size = "SIZE"
        case fetch = "FETCH"
        case caseInsensitive = "CASEINSENSITIVE"
        case ci = "CI"
        case utiConformsTo = "UTI-CONFORMS-TO"
        case utiEquals = "UTI-EQUALS"

        /// Up to 16 upper-cased ASCII letters packed into two words: a
        /// cheap dictionary key for keyword lookup.
        private struct PackedWord: Hashable {
            var low: UInt64 = 0
            var high: UInt64 = 0

            /// Packs `scalars` upper-cased, or returns nil when they are not
            /// ASCII or too long to be a keyword.
            init?(_ scalars: some Sequence<Unicode.Scalar>) {
                var count = 0
                for scalar in scalars {
                    // Only ASCII: upper-casing would map some non-ASCII
                    // letters to ASCII ones (`ı` → `I`), which must not
                    // make keywords.
                    guard scalar.isASCII, scalar.value != 0, count < 16 else { return nil }
                    let byte = UInt64(PredicateLexer.asciiUppercase(scalar).value)
                    if count < 8 {
                        low |= byte << (8 * UInt64(count))
                    } else {
                        high |= byte << (8 * UInt64(count - 8))
                    }
                    count += 1
                }
            }
        }

        /// Every keyword by its packed upper-case spelling.
        private static let byName: [PackedWord: Keyword] = {
            var table: [PackedWord: Keyword] = [:]
            for keyword in allCases {
                if let packed = PackedWord(keyword.rawValue.unicodeScalars) { table[packed] = keyword }
            }
            return table
        }()

        /// The keyword spelled `word` in any case, if it is one.
        static func named(_ word: String) -> Keyword? {
            named(word.unicodeScalars)
        }

        /// The keyword spelled by `scalars` in any case, if it is one.
        static func named(_ scalars: some Sequence<Unicode.Scalar>) -> Keyword? {
            guard let packed = PackedWord(scalars) else { return nil }
            return byName[packed]
        }

        /// The comparison operator the keyword stands for, if any.
        var comparisonOperator: ComparisonOperator? {
            switch self {
            case .between: .between
            case .in: .in
            case .beginsWith: .beginsWith
            case .endsWith: .endsWith
            case .contains: .contains
            case .like: .like
            case .matches: .matches
            default: nil
            }
        }

        /// The quantifier the keyword stands for, if any.
        var quantifier: Quantifier? {
            switch self {
            case .any, .some: .any
            case .all: .all
            case .none: Quantifier.none
            default: nil
            }
        }
    }

    /// What the token is, with its value.
    enum Kind: Sendable, Hashable {
        /// A key name: letters, digits, `_`, not a keyword.
        case identifier(String)
        /// `#name`: a key name that may be a keyword; the name without `#`.
        case escapedIdentifier(String)
        /// A reserved word; `&&`, `||` and `!` are lexed as `AND`, `OR`, `NOT`.
        case keyword(Keyword)
        /// `$NAME`: the name without `$`.
        case variable(String)
        /// `@count`, `@sum`…: the name without `@`, as written.
        case collectionOperator(String)
        /// A quoted string, escapes resolved.
        case string(String)
        /// A number: decimal text, signless, `+` removed; hexadecimal, octal
        /// and binary converted to decimal.
        case number(String)
        /// A format argument (`%@`, `%K`, `%d`…), as written.
        case formatArgument(String)
        /// `(`
        case leftParen
        /// `)`
        case rightParen
        /// `{`
        case leftBrace
        /// `}`
        case rightBrace
        /// `[`
        case leftBracket
        /// `]`
        case rightBracket
        /// `,`
        case comma
        /// `.`
        case dot
        /// `:`
        case colon
        /// `:=`
        case assign
        /// `=`, `==`, `<`, `<=`, `=<`, `>`, `>=`, `=>`, `!=`, `<>`.
        case comparison(ComparisonOperator)
        /// `+`
        case plus
        /// `-`
        case minus
        /// `*`
        case star
        /// `**`
        case power
        /// `/`
        case slash
        /// A character that starts no token.
        case invalid
        /// The end of the text.
        case end
    }

    /// What the token is.
    var kind: Kind
    /// Where the token is, in Unicode scalar offsets.
    var scalarRange: Range<Int>
    /// Where the token is, in `Character` offsets.
    var range: SourceRange

    /// Whether the token is the keyword `keyword` (or its symbolic form).
    func isKeyword(_ keyword: Keyword) -> Bool {
        if case .keyword(let k) = kind { return k == keyword }
        return false
    }

    /// Whether the token is the end of the text.
    var isEnd: Bool {
        if case .end = kind { return true }
        return false
    }
}
