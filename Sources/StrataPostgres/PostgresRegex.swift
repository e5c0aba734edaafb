import StrataModel

/// `MATCHES` patterns in the subset that ICU (the evaluator's regular
/// expressions) and PostgreSQL's advanced regular expressions read alike,
/// written for PostgreSQL; anything outside it is refused with
/// ``StrataError/Code/unsupported`` naming the construct.
///
/// The subset: literal characters; `\` before a punctuation character;
/// `.` (any character but a line terminator, as ICU reads it: written as
/// the class `[^\n\r\u0085\u2028\u2029]`); bracket classes of literal
/// characters and ranges, negated or not; groups `(…)` and `(?:…)`;
/// alternation; the greedy quantifiers `*`, `+`, `?` and `{n}`, `{n,}`,
/// `{n,m}` (up to 255, PostgreSQL's limit). Refused: other escapes (`\d`,
/// `\w`, `\s`, `\b`, `\p{…}`… are Unicode-aware in ICU, not in
/// PostgreSQL's C collation), anchors, lazy and possessive quantifiers,
/// look-around, flags, nested or combined classes.
enum PostgresRegex {
    /// `pattern` as a PostgreSQL pattern matching the same whole strings
    /// (anchored: `^(?:…)$`).
    static func wholeString(_ pattern: String) throws(StrataError) -> String {
        "^(?:" + (try translate(pattern)) + ")$"
    }

    /// The body of the translation (unanchored).
    static func translate(_ pattern: String) throws(StrataError) -> String {
        let scalars = Array(pattern.unicodeScalars)
        var out = ""
        var i = 0
        var afterAtom = false
        func refuse(_ construct: String) -> StrataError {
            StrataError(.unsupported, "the PostgreSQL store does not compile MATCHES with \(construct) (in '\(pattern)'): ICU and PostgreSQL do not read it alike")
        }
        func quantifierFollows(_ index: Int) throws(StrataError) {
            guard index < scalars.count else { return }
            if scalars[index] == "?" || scalars[index] == "+" { throw refuse("a lazy or possessive quantifier") }
            if "*{".unicodeScalars.contains(scalars[index]) { throw refuse("a quantifier after a quantifier") }
        }
        while i < scalars.count {
            let c = scalars[i]
            switch c {
            case "\\":
                guard i + 1 < scalars.count else { throw refuse("a trailing backslash") }
                let next = scalars[i + 1]
                guard next.isASCII, Self.escapable.contains(next) else { throw refuse("the escape \\\(Character(next))") }
                out += "\\" + String(Character(next))
                i += 2
                afterAtom = true
            case ".":
                out += #"[^\n\r\u0085\u2028\u2029]"#
                i += 1
                afterAtom = true
            case "*", "+", "?":
                guard afterAtom else { throw refuse("a quantifier with nothing to repeat") }
                out += String(Character(c))
                i += 1
                try quantifierFollows(i)
                afterAtom = false
            case "{":
                guard afterAtom else { throw refuse("a quantifier with nothing to repeat") }
                var j = i + 1
                var bounds = ""
                while j < scalars.count, scalars[j] != "}" {
                    bounds.unicodeScalars.append(scalars[j])
                    j += 1
                }
                let parts = bounds.split(separator: ",", omittingEmptySubsequences: false)
                guard j < scalars.count, (1...2).contains(parts.count), let low = Int(parts[0]), low <= 255,
                      parts.count == 1 || parts[1].isEmpty || (Int(parts[1]).map { $0 >= low && $0 <= 255 } ?? false) else {
                    throw refuse("the bound {\(bounds)}")
                }
                out += "{" + bounds + "}"
                i = j + 1
                try quantifierFollows(i)
                afterAtom = false
            case "(":
                if i + 1 < scalars.count, scalars[i + 1] == "?" {
                    guard i + 2 < scalars.count, scalars[i + 2] == ":" else { throw refuse("a (? group construct") }
                    out += "(?:"
                    i += 3
                } else {
                    out += "("
                    i += 1
                }
                afterAtom = false
            case ")":
                out += ")"
                i += 1
                afterAtom = true
            case "|":
                out += "|"
                i += 1
                afterAtom = false
            case "[":
                let (translated, end) = try bracket(scalars, from: i, refuse: refuse)
                out += translated
                i = end
                afterAtom = true
            case "^", "$":
                throw refuse("an anchor")
            case "]", "}":
                throw refuse("an unmatched '\(Character(c))'")
            default:
                out.unicodeScalars.append(c)
                i += 1
                afterAtom = true
            }
        }
        return out
    }

    /// The punctuation a backslash makes literal in both dialects.
    static let escapable = Set(#".*+?()[]{}|^$\-/"#.unicodeScalars)

    /// A bracket class starting at `start` (`[`): its translation and the
    /// index after its `]`.
    private static func bracket(_ scalars: [Unicode.Scalar], from start: Int, refuse: (String) -> StrataError) throws(StrataError) -> (String, Int) {
        var i = start + 1
        var out = "["
        if i < scalars.count, scalars[i] == "^" {
            out += "^"
            i += 1
        }
        var items = 0
        while i < scalars.count, scalars[i] != "]" {
            let c = scalars[i]
            guard c != "[", c != "\\", c != "&", c != "-" else { throw refuse("'\(Character(c))' in a bracket class") }
            if i + 2 < scalars.count, scalars[i + 1] == "-", scalars[i + 2] != "]" {
                let upper = scalars[i + 2]
                guard upper != "[", upper != "\\", upper != "&", upper != "-", c.value <= upper.value else { throw refuse("the range \(Character(c))-\(Character(upper))") }
                out.unicodeScalars.append(c)
                out += "-"
                out.unicodeScalars.append(upper)
                i += 3
            } else {
                out.unicodeScalars.append(c)
                i += 1
            }
            items += 1
        }
        guard i < scalars.count, items > 0 else { throw refuse("an empty or unterminated bracket class") }
        return (out + "]", i + 1)
    }
}
