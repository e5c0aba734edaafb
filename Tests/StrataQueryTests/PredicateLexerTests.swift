import Testing
import StrataModel
@testable import StrataQuery

@Suite struct PredicateLexerTests {
    /// The kinds of the tokens of `text`, without the final `.end`.
    private func kinds(_ text: String) throws -> [Token.Kind] {
        let tokens = try PredicateLexer.tokenize(text)
        #expect(tokens.last?.isEnd == true)
        return tokens.dropLast().map(\.kind)
    }

    /// The single token of `text`.
    private func single(_ text: String) throws -> Token.Kind? {
        let all = try kinds(text)
        #expect(all.count == 1, "\(text) lexed as \(all)")
        return all.first
    }

    /// The error thrown while lexing `text`.
    private func lexError(_ text: String) -> PredicateSyntaxError? {
        do {
            _ = try PredicateLexer.tokenize(text)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Words

    @Test func identifiersAndKeywords() throws {
        #expect(try kinds("name author_2 _x") == [.identifier("name"), .identifier("author_2"), .identifier("_x")])
        #expect(try kinds("AND and And OR or NOT") == [
            .keyword(.and), .keyword(.and), .keyword(.and), .keyword(.or), .keyword(.or), .keyword(.not),
        ])
        #expect(try kinds("&& || !") == [.keyword(.and), .keyword(.or), .keyword(.not)])
        #expect(try kinds("beginswith EndsWith CONTAINS like Matches between in") == [
            .keyword(.beginsWith), .keyword(.endsWith), .keyword(.contains), .keyword(.like),
            .keyword(.matches), .keyword(.between), .keyword(.in),
        ])
        #expect(try kinds("TRUEPREDICATE falsepredicate SELF self SubQuery cast") == [
            .keyword(.truePredicate), .keyword(.falsePredicate), .keyword(.self), .keyword(.self),
            .keyword(.subquery), .keyword(.cast),
        ])
        #expect(try kinds("true YES false no NIL null any Some ALL none") == [
            .keyword(.true), .keyword(.yes), .keyword(.false), .keyword(.no), .keyword(.nil), .keyword(.null),
            .keyword(.any), .keyword(.some), .keyword(.all), .keyword(.none),
        ])
        // Words that merely contain keywords are identifiers.
        #expect(try kinds("android order notes inPrint selfish") == [
            .identifier("android"), .identifier("order"), .identifier("notes"), .identifier("inPrint"), .identifier("selfish"),
        ])
    }

    @Test func unicodeIdentifiers() throws {
        #expect(try single("prénom") == .identifier("prénom"))
        #expect(try single("cafe\u{301}") == .identifier("cafe\u{301}"))
        #expect(try single("名前") == .identifier("名前"))
        // Non-ASCII letters that upper-case to ASCII do not make keywords.
        #expect(try single("ın") == .identifier("ın"))
    }

    @Test func sigils() throws {
        #expect(try kinds("#IN #name") == [.escapedIdentifier("IN"), .escapedIdentifier("name")])
        #expect(try kinds("$FETCH_SOURCE.uuid") == [.variable("FETCH_SOURCE"), .dot, .identifier("uuid")])
        #expect(try kinds("$in") == [.variable("in")])
        #expect(try kinds("items.@count") == [.identifier("items"), .dot, .collectionOperator("count")])
        #expect(try kinds("%@ %K %d %lld %%") == [
            .formatArgument("%@"), .formatArgument("%K"), .formatArgument("%d"), .formatArgument("%lld"), .formatArgument("%%"),
        ])
        #expect(try kinds("UTI-CONFORMS-TO uti-equals UTI") == [
            .keyword(.utiConformsTo), .keyword(.utiEquals), .identifier("UTI"),
        ])
    }

    @Test func sigilWithoutName() {
        #expect(lexError("$ x")?.expected == "variable name after '$'")
        #expect(lexError("a.#")?.expected == "key name after '#'")
        #expect(lexError("a.@1")?.expected == "collection operator name after '@'")
    }

    // MARK: - Punctuation and operators

    @Test func operators() throws {
        #expect(try kinds("= == != <> < <= =< > >= =>") == [
            .comparison(.equal), .comparison(.equal), .comparison(.notEqual), .comparison(.notEqual),
            .comparison(.lessThan), .comparison(.lessThanOrEqual), .comparison(.lessThanOrEqual),
            .comparison(.greaterThan), .comparison(.greaterThanOrEqual), .comparison(.greaterThanOrEqual),
        ])
        #expect(try kinds("+ - * ** / :=") == [.plus, .minus, .star, .power, .slash, .assign])
        #expect(try kinds("(){}[],.:") == [
            .leftParen, .rightParen, .leftBrace, .rightBrace, .leftBracket, .rightBracket, .comma, .dot, .colon,
        ])
        #expect(try kinds("a<=b") == [.identifier("a"), .comparison(.lessThanOrEqual), .identifier("b")])
        #expect(try kinds("!a") == [.keyword(.not), .identifier("a")])
    }

    @Test func invalidCharactersBecomeTokens() throws {
        #expect(try kinds("a ^ b") == [.identifier("a"), .invalid, .identifier("b")])
        #expect(try kinds("&") == [.invalid])
        #expect(try kinds("|") == [.invalid])
        #expect(try kinds("%") == [.invalid])
        #expect(try kinds("\u{0}") == [.invalid])
    }

    @Test func whitespace() throws {
        #expect(try kinds(" \t\n\r\n a \u{A0}\u{2028} b\n") == [.identifier("a"), .identifier("b")])
        #expect(try kinds("") == [])
        #expect(try kinds(" \n\t ") == [])
    }

    // MARK: - Numbers

    @Test func decimalNumbers() throws {
        #expect(try single("0") == .number("0"))
        #expect(try single("42") == .number("42"))
        #expect(try single("007") == .number("007"))
        #expect(try single("3.25") == .number("3.25"))
        #expect(try single("1.5e3") == .number("1.5e3"))
        #expect(try single("1E-3") == .number("1E-3"))
        #expect(try single("2e+10") == .number("2e10"))
        #expect(try single("12345678901234567890123") == .number("12345678901234567890123"))
        // Signs are separate tokens; the parser joins them to adjacent numbers.
        #expect(try kinds("-5") == [.minus, .number("5")])
    }

    @Test func radixNumbers() throws {
        #expect(try single("0x1F") == .number("31"))
        #expect(try single("0XfF") == .number("255"))
        #expect(try single("0o17") == .number("15"))
        #expect(try single("0O777") == .number("511"))
        #expect(try single("0b101") == .number("5"))
        #expect(try single("0B0") == .number("0"))
        #expect(try single("0xFFFFFFFFFFFFFFFF") == .number("18446744073709551615"))
        #expect(try single("0x10000000000000000") == .number("18446744073709551616"))
        #expect(try single("0xDEADBEEFDEADBEEFDEADBEEF") == .number("68915718021581205938132336367"))
        #expect(PredicateLexer.decimalText(digits: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0], radix: 10) == "1000000000")
    }

    @Test func malformedNumbers() {
        #expect(lexError("0x")?.expected == "hexadecimal digit")
        #expect(lexError("0x1G")?.expected == "hexadecimal digit")
        #expect(lexError("0b102")?.expected == "binary digit")
        #expect(lexError("0o8")?.expected == "octal digit")
        #expect(lexError("1.")?.expected == "digit after decimal point")
        #expect(lexError("1.x")?.expected == "digit after decimal point")
        #expect(lexError("1e")?.expected == "digit in exponent")
        #expect(lexError("1e+")?.expected == "digit in exponent")
        #expect(lexError("12abc")?.expected == "end of number")
        #expect(lexError("1.5_")?.expected == "end of number")
        let error = lexError("x == 12abc")
        #expect(error?.column == 8)
        #expect(error?.found == "'a'")
    }

    // MARK: - Strings

    @Test func strings() throws {
        #expect(try single("'abc'") == .string("abc"))
        #expect(try single("\"abc\"") == .string("abc"))
        #expect(try single("''") == .string(""))
        #expect(try single("'say \"hi\"'") == .string("say \"hi\""))
        #expect(try single("\"it's\"") == .string("it's"))
        #expect(try single("'two\nlines'") == .string("two\nlines"))
        #expect(try single("'crème brûlée 😀'") == .string("crème brûlée 😀"))
    }

    @Test func escapes() throws {
        #expect(try single(#"'\n\t\r\0'"#) == .string("\n\t\r\0"))
        #expect(try single(#"'\\ \' \"'"#) == .string(#"\ ' ""#))
        #expect(try single(#""\"quoted\"""#) == .string("\"quoted\""))
        #expect(try single(#"'\a\b\f\v'"#) == .string("\u{07}\u{08}\u{0C}\u{0B}"))
        #expect(try single(#"'\u00e9\u0041'"#) == .string("éA"))
        #expect(try single(#"'\uD83D\uDE00'"#) == .string("😀"))
        #expect(try single(#"'\x41\x7a'"#) == .string("Az"))
        // Unknown escapes are kept, so regular expressions survive.
        #expect(try single(#"'\d+\.\w'"#) == .string(#"\d+\.\w"#))
    }

    @Test func malformedStrings() {
        let unterminated = lexError("name == 'abc")
        #expect(unterminated?.expected == "closing ' for the string at line 1, column 9")
        #expect(unterminated?.found == "end of input")
        #expect(unterminated?.column == 13)
        #expect(lexError("\"abc\\")?.found == "end of input")
        #expect(lexError(#"'\u12'"#)?.expected == #"escape \uXXXX with 4 hexadecimal digits"#)
        #expect(lexError(#"'\xZ1'"#)?.expected == #"escape \xHH with 2 hexadecimal digits"#)
        #expect(lexError(#"'\uD83D'"#)?.expected == "a Unicode scalar (a lone surrogate is not one)")
        #expect(lexError(#"'\uDE00'"#)?.expected == "a Unicode scalar (a lone surrogate is not one)")
        #expect(lexError(#"'\uD83D\u0041'"#)?.expected == "a Unicode scalar (a lone surrogate is not one)")
        #expect(lexError(#"'\u"#)?.found == "end of input")
    }

    // MARK: - Positions

    @Test func positionsAreCharacterOffsets() throws {
        let tokens = try PredicateLexer.tokenize("é == 'x👍🏽y' AND b")
        let ranges = tokens.map { [$0.range.start, $0.range.end] }
        // "👍🏽" is two scalars but one character.
        #expect(ranges == [[0, 1], [2, 4], [5, 10], [11, 14], [15, 16], [16, 16]])
        #expect(tokens[2].scalarRange == 5..<11)
    }

    @Test func combiningMarkAfterQuoteStaysInTheString() throws {
        // The closing quote and a following combining mark form one
        // character; the string token covers it.
        let tokens = try PredicateLexer.tokenize("'a'\u{301} b")
        #expect(tokens.first?.kind == .string("a"))
        #expect(tokens.first?.range == SourceRange(start: 0, end: 3))
    }

    @Test func errorPositionsAcrossLines() {
        let error = lexError("a == 1 AND\n  b == 0x")
        #expect(error?.line == 2)
        #expect(error?.column == 10)
        #expect(error?.offset == 20)
        #expect(error?.sourceLine == "  b == 0x")
        let crlf = lexError("a == 1\r\nAND 1.")
        #expect(crlf?.line == 2)
        #expect(crlf?.column == 7)
    }
}
