import Foundation
import PostgresNIO
import StrataModel
import StrataPostgresTesting
import StrataQuery
import Testing
@testable import StrataPostgres

@Suite struct PostgresDialectTests {
    @Test("Bound values are numbered in order; quoted identifiers and literals keep their question marks")
    func placeholders() {
        let dialect = PostgresDialect()
        #expect(dialect.statement("SELECT 1 WHERE a = ? AND b IN (?, ?)") == "SELECT 1 WHERE a = $1 AND b IN ($2, $3)")
        #expect(dialect.statement("SELECT \"odd?\" FROM t WHERE x = '?' AND y = ?") == "SELECT \"odd?\" FROM t WHERE x = '?' AND y = $1")
        #expect(dialect.statement("no values") == "no values")
    }

    @Test("[c], [d] and [cd] read the folded copy of a column, and nothing else")
    func folding() throws {
        let dialect = PostgresDialect()
        #expect(try dialect.fold(SQLFragment("\"t0\".\"ZTITLE\""), .caseInsensitive).sql == "\"t0\".\"ZTITLE__F1\"")
        #expect(try dialect.fold(SQLFragment("\"t3\".\"ZNAME\""), [.caseInsensitive, .diacriticInsensitive]).sql == "\"t3\".\"ZNAME__F3\"")
        for computed in ["(SELECT MAX(\"t1\".\"ZNAME\") FROM \"ZTAG\" AS \"t1\")", "\"t0\".\"ZA\" || \"t0\".\"ZB\"", "\"t0\"", "?"] {
            #expect(throws: StrataError.self) { try dialect.fold(SQLFragment(computed), .caseInsensitive) }
        }
        #expect(throws: StrataError.self) { try dialect.fold(SQLFragment("?", [.text("x")]), .caseInsensitive) }
    }

    @Test("LIKE units: a Character of one scalar is itself, one of several is bracketed by U+0001 and U+0002; plain text stores NULL")
    func likeUnits() {
        #expect(PostgresLike.units("") == nil)
        #expect(PostgresLike.units("plain ASCII, tab\t and newline\n") == nil)
        #expect(PostgresLike.units("éclair 日本 😀") == nil)
        #expect(PostgresLike.units("e\u{301}clair") == "\u{1}e\u{301}\u{2}clair")
        #expect(PostgresLike.units("a\r\nb") == "a\u{1}\r\n\u{2}b")
        #expect(PostgresLike.units("\u{1}\u{2}") == "\u{1}1\u{2}\u{1}2\u{2}")
        #expect(PostgresLike.units("🇫🇷") == "\u{1}🇫🇷\u{2}")
        // The companions of a text: three folded copies, then the units of
        // the text and of each folding (NULL when they are the text).
        let values = PostgresCompanion.values(.text("E\u{301}"))
        #expect(values.count == PostgresCompanion.all.count)
        #expect(values == PostgresCompanion.all.map { $0.value(.text("E\u{301}")) })
        #expect(PostgresCompanion.values(.null) == Array(repeating: .null, count: PostgresCompanion.all.count))
    }

    @Test("A LIKE pattern becomes an anchored expression over units, its punctuation escaped")
    func likeRegex() throws {
        let unit = PostgresLike.unit
        #expect(PostgresLike.regex("") == "^$")
        #expect(PostgresLike.regex("a?*") == "^a" + unit + unit + "*$")
        #expect(PostgresLike.regex("a\\*b.c") == "^a\\*b\\.c$")
        #expect(PostgresLike.regex("e\u{301}") == "^\u{1}e\u{301}\u{2}$")
        let dialect = PostgresDialect()
        let like = try dialect.like(SQLFragment("\"t0\".\"ZTITLE\""), SQLFragment("?", [.text("x*")]), options: .caseInsensitive)
        #expect(like.sql == "(COALESCE(\"t0\".\"ZTITLE__L1\", \"t0\".\"ZTITLE__F1\") ~ ?)")
        #expect(like.arguments == [.text("^x" + unit + "*$")])
        // A pattern read from a column is translated from its units, row by row.
        let byColumn = try dialect.like(SQLFragment("\"t0\".\"ZTITLE\""), SQLFragment("\"t1\".\"ZNAME__F3\""), options: [.caseInsensitive, .diacriticInsensitive])
        #expect(byColumn.sql.contains("COALESCE(\"t1\".\"ZNAME__L3\", \"t1\".\"ZNAME__F3\")"))
        #expect(byColumn.arguments.isEmpty)
        // A computed subject or pattern is refused.
        #expect(throws: StrataError.self) { try dialect.like(SQLFragment("(SELECT MAX(\"t1\".\"ZNAME\") FROM \"ZTAG\" AS \"t1\")"), SQLFragment("?", [.text("x")]), options: []) }
        #expect(throws: StrataError.self) { try dialect.like(SQLFragment("\"t0\".\"ZTITLE\""), SQLFragment("(\"t1\".\"ZA\" || \"t1\".\"ZB\")"), options: []) }
    }

    @Test("NULL sorts first ascending and last descending")
    func nullOrder() {
        let dialect = PostgresDialect()
        #expect(dialect.orderTerm("x", ascending: true) == "x ASC NULLS FIRST")
        #expect(dialect.orderTerm("x", ascending: false) == "x DESC NULLS LAST")
    }

    @Test("MATCHES patterns in the common subset are translated; others are refused naming the construct")
    func regexSubset() throws {
        #expect(try PostgresRegex.wholeString("[A-Z].*") == #"^(?:[A-Z][^\n\r\u0085\u2028\u2029]*)$"#)
        #expect(try PostgresRegex.wholeString("a|apple") == "^(?:a|apple)$")
        #expect(try PostgresRegex.wholeString(#"(?:x\.y){2,3}[^a-c]+"#) == #"^(?:(?:x\.y){2,3}[^a-c]+)$"#)
        let refused: [(String, String)] = [
            (#"\d+"#, "escape"), (#"\w"#, "escape"), ("a*?", "lazy"), ("a++", "possessive"), ("^a", "anchor"), ("a$", "anchor"),
            ("(?i)a", "(?"), ("(?=a)", "(?"), ("[[:alpha:]]", "bracket"), ("[a-]", "bracket"), ("a{300}", "bound"), ("[]", "bracket"),
        ]
        for (pattern, construct) in refused {
            do {
                _ = try PostgresRegex.wholeString(pattern)
                Issue.record("\(pattern) was translated")
            } catch {
                #expect(error.code == .unsupported)
                #expect(error.message.contains(construct), "\(pattern): \(error.message)")
            }
        }
        let dialect = PostgresDialect()
        #expect(throws: StrataError.self) { try dialect.matches(SQLFragment("x"), .bind(.text("a")), caseInsensitive: true) }
        #expect(throws: StrataError.self) { try dialect.matches(SQLFragment("x"), SQLFragment("\"t0\".\"ZP\""), caseInsensitive: false) }
    }

    @Test("Text holding U+0000 is refused, never cut")
    func nulText() {
        var bindings = PostgresBindings()
        #expect(throws: StrataError.self) { try PostgresValueCoding.append(.text("a\u{0}b"), to: &bindings) }
        #expect((try? PostgresValueCoding.append(.text("ab"), to: &bindings)) != nil)
    }
}

/// The dialect's SQL on a real server, where what it claims depends on
/// PostgreSQL's behaviour.
@Suite(.enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipComment)), .timeLimit(.minutes(1)))
struct PostgresDialectServerTests {
    @Test("Every translated pattern matches on PostgreSQL exactly the strings ICU matches")
    func regexAgreement() async throws {
        let patterns = ["[A-Z].*", "a|apple", ".*[aeiou].*", "e.*", "(ab)+c?", "(?:x|y){2,3}", "[^a-c]+", ".", "..", "a.c", #"\.\*"#,
                        "[0-9]{3}", "é+", "😀.*", "[α-ω]+", "e.clair", "(a|b)*", "[ -~]*"]
        let subjects = ["", "a", "apple", "Apple", "abc", "a\nc", "a\rc", "a\u{2028}c", "a\u{85}c", "e\u{301}clair", "éclair", "😀 Smile",
                        "ababc", "xyx", "xyxy", "123", ".*", "αβγ", "ab\n", "\n", "exclair", "e😀clair"]
        try await PostgresTestServer.withClient { client in
            for pattern in patterns {
                let translated = try PostgresRegex.wholeString(pattern)
                for subject in subjects {
                    var matched: Bool?
                    for try await value in try await client.query("SELECT \(subject) ~ \(translated)").decode(Bool.self) { matched = value }
                    #expect(matched == (try RegexCache.matches(subject, pattern: pattern, caseInsensitive: false)),
                            "\(pattern.debugDescription) against \(subject.debugDescription)")
                }
            }
        }
    }


    @Test("LIKE over units on PostgreSQL matches exactly what LikePattern matches, for texts and patterns made of awkward Characters")
    func likeAgreement() async throws {
        // Pieces that merge into other Characters when put side by side
        // (e + U+0301, CR + LF, regional indicators), controls the units
        // use, wildcards, escapes and regular-expression punctuation.
        let pieces = ["a", "b", "é", "e", "\u{301}", "\r", "\n", "\u{1}", "\u{2}", "😀", "👨‍👩‍👧", "🇫", "🇷", "ß", " ", ".", "(", "[", "$", "^", "\\", "*", "?"]
        var random = SplitMix(seed: 0x11CE)
        func text(_ maximum: Int) -> String {
            (0..<random.next(below: maximum + 1)).map { _ in pieces[random.next(below: pieces.count)] }.joined()
        }
        var subjects: [String] = []
        var patterns: [String] = []
        for _ in 0..<4000 {
            let subject = text(6)
            // Half the patterns are the subject with some Characters turned
            // into wildcards, so that many match.
            var pattern = random.next(below: 2) == 0 ? text(5) : ""
            if pattern.isEmpty {
                for character in subject {
                    switch random.next(below: 5) {
                    case 0: pattern += "?"
                    case 1: pattern += "*"
                    default: pattern += String(character) == "*" || String(character) == "?" || String(character) == "\\" ? "\\" + String(character) : String(character)
                    }
                }
            }
            subjects.append(subject)
            patterns.append(pattern)
        }
        let units = subjects.map { PostgresLike.units($0) ?? $0 }
        let regexes = patterns.map(PostgresLike.regex)
        let patternUnits = patterns.map { PostgresLike.units($0) ?? $0 }
        // Each pattern translated here, and by PostgreSQL from its units
        // (as for a pattern read from a column).
        let translatedInSQL = PostgresLike.regexSQL(units: "s.p")
        let matched = try await PostgresTestServer.withClient { client -> [(Bool, Bool)] in
            var matched: [(Bool, Bool)] = []
            let rows = try await client.query(PostgresQuery(unsafeSQL: "SELECT s.x ~ s.r, s.x ~ \(translatedInSQL) FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS s(x, r, p, i) ORDER BY s.i", binds: {
                var binds = PostgresBindings()
                binds.append(units)
                binds.append(regexes)
                binds.append(patternUnits)
                return binds
            }()))
            for try await value in rows.decode((Bool, Bool).self) { matched.append(value) }
            return matched
        }
        #expect(matched.count == subjects.count)
        var disagreements = 0
        for (i, (constant, column)) in matched.enumerated() {
            let expected = LikePattern.matches(subjects[i], pattern: patterns[i])
            guard constant != expected || column != expected else { continue }
            disagreements += 1
            if disagreements <= 5 { Issue.record("\(patterns[i].debugDescription) against \(subjects[i].debugDescription): PostgreSQL \(constant) (constant), \(column) (column)") }
        }
        #expect(matched.filter { $0.0 }.count > 200, "too few matches to prove anything")
    }

    @Test("A Double as a Decimal on PostgreSQL is DecimalConversion's Decimal, nil where Foundation has none")
    func doubleAsDecimalAgreement() async throws {
        var random = SplitMix(seed: 0xDEC1)
        // Random bit patterns cover every exponent; the rest are the edges
        // of Decimal's exponents and everyday values.
        var values: [Double] = (0..<3000).map { _ in Double(bitPattern: random.nextBits()) }
        values += [0, -0.0, 0.1, 0.3, 0.1 + 0.2, 1e-5, 1.5e20, 100, 1e15, 1e-128, 1.5e-128, 1e-129, 1.2345678901234567e-112, 1e127, 1e128, 1.2e128,
                   9.9e127, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .nan, .infinity, -.infinity, Double(Float(0.1))]
        // Every power of two: below each, the texts that read back span half
        // as far as above, so the nearer shortest text may not be one.
        values += (-1074...1023).map { Double(sign: .plus, exponent: $0, significand: 1) }
        let expression = PostgresDialect.doubleAsDecimal(SQLFragment("s.x")).sql
        let boundValues = values
        let texts = try await PostgresTestServer.withClient { client -> [String?] in
            var texts: [String?] = []
            let rows = try await client.query(PostgresQuery(unsafeSQL: "SELECT CAST(\(expression) AS text) FROM unnest($1::float8[]) WITH ORDINALITY AS s(x, i) ORDER BY s.i", binds: {
                var binds = PostgresBindings()
                binds.append(boundValues)
                return binds
            }()))
            for try await text in rows.decode(String?.self) { texts.append(text) }
            return texts
        }
        #expect(texts.count == values.count)
        var disagreements = 0
        for (value, text) in zip(values, texts) {
            let expected = DecimalConversion.decimal(from: value)
            let actual = text.flatMap { Decimal(string: $0, locale: nil) }
            if expected != actual {
                disagreements += 1
                if disagreements <= 5 { Issue.record("\(value): DecimalConversion \(String(describing: expected)), PostgreSQL \(text ?? "NULL")") }
            }
        }
        #expect(texts.contains(nil) && texts.contains { $0 != nil })
    }

    @Test("@sum of Doubles on PostgreSQL is ExactDoubleSum's: exact, rounded once, whatever the order")
    func exactDoubleSumAgreement() async throws {
        var random = SplitMix(seed: 0x5A5A)
        // Groups of terms that cancel, differ wildly in size, are subnormal,
        // special, or huge (running totals past the largest Double).
        func term() -> Double {
            switch random.next(below: 6) {
            case 0: return Double(random.next(below: 2000) - 1000) / 10
            case 1: return [0.1, 0.2, 0.3, -0.1, -0.3, 1e16, -1e16, 1, 3][random.next(below: 9)]
            case 2: return Double(bitPattern: random.nextBits() & 0x800F_FFFF_FFFF_FFFF)  // subnormal
            case 3:
                let value = Double(bitPattern: random.nextBits())
                return value.isFinite ? value : .greatestFiniteMagnitude
            case 4: return random.next(below: 20) == 0 ? [.nan, .infinity, -.infinity][random.next(below: 3)] : 0x1p-60 * Double(random.next(below: 100))
            default: return (0x1p52 + Double(random.next(below: 1000))) * (random.next(below: 2) == 0 ? 1 : -1)
            }
        }
        var groups: [Int] = []
        var terms: [Double] = []
        for group in 0..<600 {
            for _ in 0..<(1 + random.next(below: 8)) {
                groups.append(group)
                terms.append(term())
            }
        }
        // Averages that are subnormal, round to 0 or tie between two
        // subnormals; an infinity met by its opposite (NaN: nil).
        let edges: [[Double]] = [[.leastNonzeroMagnitude, 0], [.leastNonzeroMagnitude, .leastNonzeroMagnitude, .leastNonzeroMagnitude],
                                 [3 * .leastNonzeroMagnitude, 0], [0x1p-1030, 3], [-0x1p-1030, 0, 0], [.infinity, -.infinity], [0x1p-1020, 0],
                                 [.greatestFiniteMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude], [.greatestFiniteMagnitude, 0x1p970],
                                 [.greatestFiniteMagnitude, 0x1p969], [-.greatestFiniteMagnitude, -.greatestFiniteMagnitude]]
        for (offset, edge) in edges.enumerated() {
            groups += Array(repeating: 600 + offset, count: edge.count)
            terms += edge
        }
        let groupCount = 600 + edges.count
        let sum = PostgresDialect.exactDoubleSum("s.x")
        let average = PostgresDialect.exactDoubleAverage("s.x")
        let (boundGroups, boundTerms) = (groups, terms)
        let rows = try await PostgresTestServer.withClient { client -> [(Double?, Double?)] in
            var rows: [(Double?, Double?)] = []
            let query = PostgresQuery(unsafeSQL: "SELECT \(sum), \(average) FROM unnest($1::bigint[], $2::float8[]) AS s(g, x) GROUP BY s.g ORDER BY s.g", binds: {
                var binds = PostgresBindings()
                binds.append(boundGroups.map(Int64.init))
                binds.append(boundTerms)
                return binds
            }())
            for try await row in try await client.query(query).decode((Double?, Double?).self) { rows.append(row) }
            return rows
        }
        var expected: [ExactDoubleSum] = Array(repeating: ExactDoubleSum(), count: groupCount)
        for (group, value) in zip(groups, terms) { expected[group].add(value) }
        #expect(rows.count == groupCount)
        // As the evaluator answers: NaN is nil.
        func same(_ a: Double?, _ b: Double?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case (let a?, let b?): a.bitPattern == b.bitPattern || (a == 0 && b == 0)
            default: false
            }
        }
        var disagreements = 0
        for (group, (actualSum, actualAverage)) in rows.enumerated() {
            let value = expected[group].value
            let wantedSum: Double? = value.isNaN ? nil : value
            let quotient = value / Double(expected[group].count)
            let wantedAverage: Double? = quotient.isNaN ? nil : quotient
            guard !same(wantedSum, actualSum) || !same(wantedAverage, actualAverage) else { continue }
            disagreements += 1
            if disagreements <= 5 {
                Issue.record("group \(zip(groups, terms).filter { $0.0 == group }.map(\.1)): sum \(String(describing: wantedSum)) vs PostgreSQL \(String(describing: actualSum)), average \(String(describing: wantedAverage)) vs \(String(describing: actualAverage))")
            }
        }
    }

    @Test("@sum and @avg of Decimals on PostgreSQL are DecimalAccumulator's: exact, then cut to a Decimal's digits")
    func decimalSumAgreement() async throws {
        var random = SplitMix(seed: 0xDEC5)
        // Decimals from one digit to 38, at exponents from -128 to 127, so
        // that many sums need more digits than a Decimal has, some cancel,
        // and some leave Decimal's range.
        func term() -> Decimal {
            let digits = 1 + random.next(below: 38)
            var text = String(1 + random.next(below: 9))
            for _ in 1..<digits { text += String(random.next(below: 10)) }
            let exponent: Int
            switch random.next(below: 5) {
            case 0: exponent = random.next(below: 256) - 128
            case 1: exponent = -random.next(below: 30)
            case 2:
                // Near Decimal's largest: a few of these leave its range.
                let large = "9" + String(repeating: "9", count: 37)
                return Decimal(string: large + "e" + String(127 - random.next(below: 2)), locale: nil) ?? 1
            default: exponent = random.next(below: 10) - 5
            }
            let value = Decimal(string: text + "e" + String(exponent), locale: nil) ?? 1
            return random.next(below: 3) == 0 ? -value : value
        }
        var groups: [Int] = []
        var terms: [Decimal] = []
        for group in 0..<498 {
            let base = term()
            for index in 0..<(1 + random.next(below: 6)) {
                groups.append(group)
                // Now and then a term that cancels the first.
                terms.append(index > 0 && random.next(below: 5) == 0 ? -base : index == 0 ? base : term())
            }
        }
        // Past Decimal's range, and back inside it.
        let largest = Decimal(string: String(repeating: "9", count: 38) + "e127", locale: nil) ?? 1
        groups += Array(repeating: 498, count: 4) + Array(repeating: 499, count: 5)
        terms += Array(repeating: largest, count: 4) + Array(repeating: largest, count: 3) + [-largest, -largest]
        let sum = PostgresDialect.decimalSum("CAST(s.t AS numeric)")
        let average = PostgresDialect.decimalAverage("CAST(s.t AS numeric)")
        let (boundGroups, boundTexts) = (groups.map(Int64.init), terms.map(\.description))
        let rows = try await PostgresTestServer.withClient { client -> [(String?, String?)] in
            var rows: [(String?, String?)] = []
            let query = PostgresQuery(unsafeSQL: "SELECT CAST(\(sum) AS text), CAST(\(average) AS text) FROM unnest($1::bigint[], $2::text[]) AS s(g, t) GROUP BY s.g ORDER BY s.g", binds: {
                var binds = PostgresBindings()
                binds.append(boundGroups)
                binds.append(boundTexts)
                return binds
            }())
            for try await row in try await client.query(query).decode((String?, String?).self) { rows.append(row) }
            return rows
        }
        var expected = Array(repeating: DecimalAccumulator(), count: 500)
        for (group, value) in zip(groups, terms) { expected[group].add(value) }
        #expect(rows.count == expected.count)
        var disagreements = 0
        var cut = 0
        for (group, (sumText, averageText)) in rows.enumerated() {
            let wanted = (expected[group].total, expected[group].average)
            // Without the zeros PostgreSQL's scale leaves past 10^-128.
            func read(_ text: String?) -> Decimal? {
                guard var text else { return nil }
                if text.contains(".") { while text.last == "0" { text.removeLast() } }
                return Decimal(string: text, locale: nil)
            }
            let actual = (read(sumText), read(averageText))
            if Self.spanMoreThanADecimal(zip(groups, terms).filter { $0.0 == group }.map(\.1)) { cut += 1 }
            guard wanted.0 != actual.0 || wanted.1 != actual.1 else { continue }
            disagreements += 1
            if disagreements <= 5 {
                let values = zip(groups, terms).filter { $0.0 == group }.map { $0.1.description }
                Issue.record("group \(values): sum \(String(describing: wanted.0)) vs PostgreSQL \(sumText ?? "NULL"); average \(String(describing: wanted.1)) vs \(averageText ?? "NULL")")
            }
        }
        // Enough sums needed cutting to prove it, and some left the range.
        #expect(cut > 20, "only \(cut) sums needed cutting")
        #expect(rows.contains { $0.0 == nil })
    }

    /// Whether the terms' digits span more places than a Decimal holds,
    /// from the highest digit of one to the lowest of another: their exact
    /// sum then (unless terms cancel) needs cutting.
    private static func spanMoreThanADecimal(_ values: [Decimal]) -> Bool {
        let nonzero = values.filter { $0 != 0 }
        guard let high = nonzero.map({ Int($0.exponent) + $0.significand.description.count }).max(),
              let low = nonzero.map({ Int($0.exponent) }).min() else { return false }
        return high - low > 39
    }

    @Test("An integer @sum past 64 bits is an error, as in the evaluator, not a wider number")
    func integerSumOverflowFails() async throws {
        let sum = PostgresDialect().integerSum("x")
        try await PostgresTestServer.withClient { client in
            var total: Int64?
            for try await value in try await client.query(PostgresQuery(unsafeSQL: "SELECT \(sum) FROM (VALUES (CAST(40 AS bigint)), (2)) AS t(x)")).decode(Int64.self) {
                total = value
            }
            #expect(total == 42)
            await #expect(throws: (any Error).self) {
                // Read as a Boolean: the error must come from the sum, not
                // from reading a number too wide for Int64.
                for try await _ in try await client.query(PostgresQuery(unsafeSQL: "SELECT (\(sum)) IS NOT NULL FROM (VALUES (CAST(9223372036854775807 AS bigint)), (1)) AS t(x)")).decode(Bool.self) {}
            }
        }
    }
}

/// A seeded generator (SplitMix64), so that a failure repeats.
private struct SplitMix {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(below bound: Int) -> Int {
        Int(nextBits() % UInt64(bound))
    }

    mutating func nextBits() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return z
    }
}
