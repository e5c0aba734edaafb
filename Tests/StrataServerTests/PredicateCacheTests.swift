import StrataQuery
import Testing
@testable import StrataServer

/// Predicate texts are parsed once and kept within bounds.
@Suite struct PredicateCacheTests {
    @Test func aTextParsesToWhatTheParserGivesAndIsKept() throws {
        let cache = PredicateCache(capacity: 4)
        let text = "pages >= $LOW AND pages <= $HIGH"
        let first = try cache.predicate(text)
        #expect(first == (try PredicateParser.parseDetailed(text)))
        #expect(try cache.predicate(text) == first)
        #expect(cache.count == 1)
    }

    @Test func blankTextIsNoPredicateAndErrorsAreNotKept() {
        let cache = PredicateCache(capacity: 4)
        #expect((try? cache.predicate("  \n")) == .some(nil))
        #expect(throws: (any Error).self) { try cache.predicate("pages >= ") }
        #expect(throws: (any Error).self) { try cache.predicate("pages >= ") }
        #expect(cache.count == 0)
    }

    @Test func theCacheStaysWithinTwoGenerationsAndKeepsWhatIsInUse() throws {
        let cache = PredicateCache(capacity: 8)
        for value in 0..<1000 {
            _ = try cache.predicate("pages == \(value)")
            // One text used all along stays (promoted each generation).
            _ = try cache.predicate("title == $TITLE")
            #expect(cache.count <= 16)
        }
        #expect(try cache.predicate("title == $TITLE") == (try PredicateParser.parseDetailed("title == $TITLE")))
    }

    @Test func textsThatDifferInTheirBytesAreDifferentPredicates() throws {
        // "é" precomposed and decomposed are equal Strings, but the parser
        // (and SQLite) keep the characters as sent.
        let cache = PredicateCache(capacity: 8)
        let precomposed = "title == \"caf\u{E9}\""
        let decomposed = "title == \"cafe\u{301}\""
        #expect(precomposed == decomposed)
        // Predicates compare their strings as Strings too: compare bytes.
        func bytes(_ predicate: Predicate?) -> [UInt8] { Array(String(describing: predicate).utf8) }
        let first = try cache.predicate(precomposed)
        let second = try cache.predicate(decomposed)
        #expect(bytes(first) == bytes(try PredicateParser.parseDetailed(precomposed)))
        #expect(bytes(second) == bytes(try PredicateParser.parseDetailed(decomposed)))
        #expect(bytes(first) != bytes(second))
        #expect(cache.count == 2)
    }

    @Test func longTextsAreParsedButNotKept() throws {
        let cache = PredicateCache(capacity: 8)
        let long = (0..<600).map { "pages == \($0)" }.joined(separator: " OR ")
        #expect(long.utf8.count > PredicateCache.maximumTextBytes)
        #expect(try cache.predicate(long) != nil)
        #expect(cache.count == 0)
    }
}
