import StrataQuery

/// `LIKE` on PostgreSQL, matching what ``LikePattern`` matches: its `?`
/// and `*` count Characters (grapheme clusters), which PostgreSQL cannot
/// see, so the store keeps beside each text column (and each folding of
/// it) the text's *units*, and matches the pattern there as a regular
/// expression.
///
/// The units of a text: each Character of one scalar is itself, except
/// U+0001 and U+0002, written `\u{1}1\u{2}` and `\u{1}2\u{2}`; each
/// Character of several scalars is its scalars between U+0001 and U+0002.
/// Controls are always Characters of their own (Unicode's grapheme rules
/// break before and after them; CR LF holds neither U+0001 nor U+0002), so
/// a unit is `[^\u{1}]` or `\u{1}[^\u{2}]*\u{2}`, and a Character of the
/// text is exactly one unit. A text whose units are itself (every
/// Character one scalar, neither U+0001 nor U+0002) stores NULL: the query
/// reads the text instead.
///
/// The pattern becomes `^…$` with `?` one unit, `*` any run of units, and
/// each literal Character its units, punctuation escaped.
package enum PostgresLike {
    /// The text's units, or nil when they are the text itself.
    package static func units(_ text: String) -> String? {
        if text.utf8.allSatisfy({ $0 >= 0x03 && $0 < 0x80 && $0 != 0x0D }) { return nil }
        var out = ""
        var changed = false
        for character in text {
            let unit = units(of: character)
            if !changed, unit.utf8.count != character.utf8.count { changed = true }
            out += unit
        }
        return changed ? out : nil
    }

    /// The units of one Character.
    static func units(of character: Character) -> String {
        let scalars = character.unicodeScalars
        guard scalars.count == 1, let scalar = scalars.first else {
            return "\u{1}" + String(character) + "\u{2}"
        }
        switch scalar.value {
        case 0x01: return "\u{1}1\u{2}"
        case 0x02: return "\u{1}2\u{2}"
        default: return String(character)
        }
    }

    /// One unit, as a PostgreSQL regular expression.
    static let unit = #"(?:[^\u0001]|\u0001[^\u0002]*\u0002)"#

    /// The PostgreSQL regular expression matching the units of exactly the
    /// texts `pattern` matches (`pattern` already folded).
    package static func regex(_ pattern: String) -> String {
        var out = "^"
        for token in LikePattern(pattern).tokens {
            switch token {
            case .one:
                out += unit
            case .star:
                out += unit + "*"
            case .literal(let bytes):
                for character in String(decoding: bytes, as: UTF8.self) {
                    for scalar in units(of: character).unicodeScalars {
                        // In PostgreSQL's advanced expressions a backslash
                        // before anything but a letter or digit is that
                        // character; letters, digits and non-ASCII stand
                        // for themselves.
                        if scalar.isASCII, !(scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)), scalar.value >= 0x20 {
                            out += "\\"
                        }
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
        }
        return out + "$"
    }

    /// SQL computing, row by row, the expression ``regex(_:)`` gives for the
    /// pattern whose units are `units` (an SQL expression; NULL for NULL):
    /// each unit, with the backslash before it if one escapes it, becomes
    /// `?` or `*` as above, or itself with its punctuation escaped.
    package static func regexSQL(units: String) -> String {
        let each = "CASE WHEN x.m[1] IS NULL AND x.m[2] = '*' THEN '\(unit)*' WHEN x.m[1] IS NULL AND x.m[2] = '?' THEN '\(unit)'"
            + #" ELSE regexp_replace(x.m[2], '[\u0020-\u002F\u003A-\u0040\u005B-\u0060\u007B-\u007F]', '\\\&', 'g') END"#
        let matches = #"regexp_matches(u.p, '(\\)?([^\u0001]|\u0001[^\u0002]*\u0002)', 'g') WITH ORDINALITY AS x(m, i)"#
        return "(SELECT CASE WHEN u.p IS NULL THEN NULL ELSE (SELECT '^' || COALESCE(string_agg(\(each), '' ORDER BY x.i), '') || '$' FROM \(matches)) END"
            + " FROM (SELECT \(units) AS p OFFSET 0) AS u)"
    }
}
