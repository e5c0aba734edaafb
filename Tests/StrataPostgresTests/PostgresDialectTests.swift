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
