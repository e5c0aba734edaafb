import Foundation
import StrataModel
import Testing
@testable import StrataQuery

private typealias M = FixtureModel

/// A minimal accessor over plain records, with temporary IDs allowed, using
/// the default keys (the descriptions themselves).
private struct PlainAccessor: ObjectGraphAccessor {
    struct Node: Sendable {
        var id: ObjectID
        var values: [String: PropertyValue] = [:]
        var toOne: [String: Int] = [:]
        var toMany: [String: [Int]] = [:]
    }

    var nodes: [Node]

    func value(_ attribute: AttributeDescription, of object: Int) -> PropertyValue { nodes[object].values[attribute.name] ?? .null }
    func destination(_ relationship: RelationshipDescription, of object: Int) -> Int? { nodes[object].toOne[relationship.name] }
    func destinations(_ relationship: RelationshipDescription, of object: Int) -> [Int] { nodes[object].toMany[relationship.name] ?? [] }
    func objectID(of object: Int) -> ObjectID { nodes[object].id }
}

@Suite struct EvaluatorTests {
    let data = FixtureData.shared
    var accessor: FixtureAccessor { FixtureAccessor(data: data) }

    private func value(_ operand: QueryOperand, _ entity: String, of index: Int, now: @escaping @Sendable () -> Date = { Date() }) throws -> PropertyValue {
        try OperandEvaluator(operand, entity: entity, model: M.model, accessor: accessor, now: now).value(of: index)
    }

    private func index(_ entity: String, where test: (FixtureRecord) -> Bool) throws -> Int {
        try #require(data.indices(of: entity).first { test(data.records[$0]) })
    }

    // MARK: - Derivations

    @Test func derivationFunctions() throws {
        let book = try index("Book") { $0["title"] == .string("Crème Brûlée") }
        let title = M.key("Book", "title")
        #expect(try value(.function(.canonical, [title]), "Book", of: book) == .string("creme brulee"))
        #expect(try value(.function(.uppercase, [title]), "Book", of: book) == .string("CRÈME BRÛLÉE"))
        #expect(try value(.function(.lowercase, [title]), "Book", of: book) == .string("crème brûlée"))
        let untitled = try index("Book") { $0["title"] == .null }
        #expect(try value(.function(.canonical, [title]), "Book", of: untitled) == .null)
        let instant = Date(timeIntervalSinceReferenceDate: 123_456)
        #expect(try value(.function(.now, []), "Book", of: book, now: { instant }) == .date(instant))
        #expect(throws: StrataError.self) { try value(.function(.uppercase, [M.key("Book", "pages")]), "Book", of: book) }
        #expect(throws: StrataError.self) { try value(.function(.canonical, []), "Book", of: book) }
    }

    @Test func derivationKeyPathsAndAggregates() throws {
        let author = try index("Author") { a in a.toMany["books"]?.count == 2 && data.many(a, "books").allSatisfy { $0["price"] != .null } }
        let record = data.records[author]
        let books = M.collection("Author", "books")
        #expect(try value(.aggregate(.count, books, nil), "Author", of: author) == .integer(2))
        #expect(try value(.aggregate(.sum, books, M.attribute("Book", "price")), "Author", of: author) == .decimal(Decimal(string: "0.3")!))
        #expect(try value(.aggregate(.avg, books, M.attribute("Book", "price")), "Author", of: author) == .decimal(Decimal(string: "0.15")!))
        let pages = data.many(record, "books").compactMap { FixtureData.int($0["pages"]) }
        #expect(try value(.aggregate(.sum, books, M.attribute("Book", "pages")), "Author", of: author) == .integer(pages.reduce(0, +)))
        #expect(try value(.aggregate(.min, books, M.attribute("Book", "pages")), "Author", of: author) == (pages.min().map(PropertyValue.integer) ?? .null))
        let subquery = QueryOperand.subqueryCount(books, M.compare(M.key("Book", "price"), .lessThan, dec("0.15"), .decimal))
        #expect(try value(subquery, "Author", of: author) == .integer(1))

        let lonely = try index("Author") { ($0.toMany["books"] ?? []).isEmpty }
        #expect(try value(.aggregate(.count, books, nil), "Author", of: lonely) == .integer(0))
        #expect(try value(.aggregate(.sum, books, M.attribute("Book", "pages")), "Author", of: lonely) == .integer(0))
        #expect(try value(.aggregate(.sum, books, M.attribute("Book", "rating")), "Author", of: lonely) == .double(0))
        #expect(try value(.aggregate(.sum, books, M.attribute("Book", "price")), "Author", of: lonely) == .decimal(0))
        #expect(try value(.aggregate(.avg, books, M.attribute("Book", "pages")), "Author", of: lonely) == .null)
        #expect(try value(.aggregate(.max, books, M.attribute("Book", "title")), "Author", of: lonely) == .null)

        let book = try index("Book") { $0.toOne["author"] != nil }
        let authorRecord = try #require(data.one(data.records[book], "author"))
        #expect(try value(M.key("Book", "author.name"), "Book", of: book) == authorRecord["name"])
        #expect(try value(M.object("Book", "author"), "Book", of: book) == .object(M.id("Author", authorRecord.primaryKey)))
        let orphan = try index("Book") { $0.toOne["author"] == nil }
        #expect(try value(M.key("Book", "author.name"), "Book", of: orphan) == .null)
        #expect(try value(M.object("Book", "author"), "Book", of: orphan) == .null)
    }

    // MARK: - Compile-time checks

    @Test func rejectsIllTypedPredicates() {
        let bad: [QueryPredicate] = [
            M.compare(M.key("Book", "title"), .equal, .integer(3), .integer),
            M.compare(M.key("Book", "pages"), .equal, .string("x"), .integer),
            M.compare(M.object("Book", "author"), .lessThan, .null, .object),
            M.compare(M.key("Book", "pages"), .in, .integer(3), .integer),
            M.list(M.key("Book", "pages"), .between, [.integer(1), .integer(2), .integer(3)], .integer),
            M.list(M.key("Book", "pages"), .equal, [.integer(1)], .integer),
            M.compare(M.key("Book", "pages"), .beginsWith, .integer(1), .integer),
            M.compare(.aggregate(.sum, M.collection("Author", "books"), M.attribute("Book", "title")), .equal, .integer(0), .integer),
            M.compare(M.key("Book", "title"), .matches, .string("[unclosed"), .string),
            .quantified(.any, CollectionPath(toMany: RelationshipStep(sourceEntity: "Book", relationship: M.model.relationship(named: "author", in: "Book")!)), .constant(true)),
        ]
        for predicate in bad {
            #expect(throws: StrataError.self, "\(predicate)") {
                _ = try PredicateEvaluator(predicate, entity: "Book", model: M.model, accessor: accessor)
            }
        }
        #expect(throws: StrataError.self) { _ = try PredicateEvaluator(.constant(true), entity: "Nope", model: M.model, accessor: accessor) }
    }

    @Test func invalidRegexNamesThePattern() {
        do {
            _ = try PredicateEvaluator(M.compare(M.key("Book", "title"), .matches, .string("a(b"), .string), entity: "Book", model: M.model, accessor: accessor)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .predicateType)
            #expect(error.message.contains("a(b"))
        }
    }

    @Test func runtimeErrorsComeFromData() throws {
        let nodes = [
            PlainAccessor.Node(id: M.id("Tag", 1), values: ["name": .string("(")]),
        ]
        let evaluator = try PredicateEvaluator(
            M.compare(M.key("Tag", "name"), .matches, M.key("Tag", "name"), .string),
            entity: "Tag", model: M.model, accessor: PlainAccessor(nodes: nodes)
        )
        #expect(throws: StrataError.self) { _ = try evaluator.evaluate(0) }

        let books = [
            PlainAccessor.Node(id: M.id("Book", 1), values: ["copies": .integer(Int64.max)]),
            PlainAccessor.Node(id: M.id("Book", 2), values: ["copies": .integer(1)]),
            PlainAccessor.Node(id: M.id("Author", 1), toMany: ["books": [0, 1]]),
        ]
        let sum = try OperandEvaluator(.aggregate(.sum, M.collection("Author", "books"), M.attribute("Book", "copies")), entity: "Author", model: M.model, accessor: PlainAccessor(nodes: books))
        do {
            _ = try sum.value(of: 2)
            Issue.record("expected an overflow error")
        } catch {
            #expect(error.code == .invalidValue)
        }
    }

    // MARK: - Fetches

    @Test func sortsUnsavedObjectsAfterSavedOnesInInputOrder() throws {
        let nodes = [
            PlainAccessor.Node(id: .temporary(entityName: "Tag"), values: ["name": .string("b")]),
            PlainAccessor.Node(id: M.id("Tag", 9), values: ["name": .string("b")]),
            PlainAccessor.Node(id: .temporary(entityName: "Tag"), values: ["name": .string("a")]),
            PlainAccessor.Node(id: .temporary(entityName: "Tag"), values: ["name": .string("b")]),
            PlainAccessor.Node(id: M.id("Tag", 3), values: ["name": .string("b")]),
            PlainAccessor.Node(id: M.id("Tag", 4)),
        ]
        let fetch = ResolvedFetch(entityName: "Tag", sortKeys: [M.sort("Tag", "name")])
        let result = try FetchEvaluator.run(fetch, model: M.model, over: nodes.indices, accessor: PlainAccessor(nodes: nodes))
        #expect(result == [5, 2, 4, 1, 0, 3])
        let descending = ResolvedFetch(entityName: "Tag", sortKeys: [M.sort("Tag", "name", ascending: false)])
        #expect(try FetchEvaluator.run(descending, model: M.model, over: nodes.indices, accessor: PlainAccessor(nodes: nodes)) == [4, 1, 0, 3, 2, 5])
    }

    @Test func countsAndWindows() throws {
        let fetch = ResolvedFetch(entityName: "Book", sortKeys: [M.sort("Book", "pages")], limit: 7, offset: 110)
        let evaluator = try FetchEvaluator(fetch, model: M.model, accessor: accessor)
        #expect(try evaluator.count(over: data.records.indices) == 7)
        #expect(try evaluator.run(over: data.records.indices).count == 7)
        let tail = try FetchEvaluator(ResolvedFetch(entityName: "Book", offset: 115), model: M.model, accessor: accessor)
        #expect(try tail.count(over: data.records.indices) == 5)
        #expect(throws: StrataError.self) { _ = try FetchEvaluator(ResolvedFetch(entityName: "Book", limit: -1), model: M.model, accessor: accessor) }
        #expect(throws: StrataError.self) { _ = try FetchEvaluator(ResolvedFetch(entityName: "Book", offset: -1), model: M.model, accessor: accessor) }
    }

    @Test func transientAttributesAreReadInMemory() throws {
        let fetch = ResolvedFetch(entityName: "Book", predicate: M.compare(M.key("Book", "notes"), .equal, .string("transient 7"), .string))
        #expect(try FetchEvaluator.run(fetch, model: M.model, over: data.records.indices, accessor: accessor).count == 1)
    }

    // MARK: - Values

    @Test func stringsCompareByScalars() {
        #expect(ValueComparison.compare("é", "e\u{301}") != 0)
        #expect("é" == "e\u{301}")   // Swift's == would equate them
        #expect(!ValueComparison.equal("é", "e\u{301}"))
        #expect(ValueComparison.compare("Z", "a") < 0)
        #expect(ValueComparison.compare("a", "ab") < 0)
        #expect(ValueComparison.compare("\u{FFFF}", "😀") < 0)
        #expect(ValueComparison.compare(Data([1, 2]), Data([1, 2, 0])) < 0)
        #expect(ValueComparison.compare(Data([2]), Data([1, 2, 0])) > 0)
    }

    @Test func stringOperators() {
        #expect(StringOperators.evaluate(.beginsWith, "crème", "cr"))
        #expect(StringOperators.evaluate(.endsWith, "crème", "ème"))
        #expect(!StringOperators.evaluate(.endsWith, "creme\u{301}", "é"))
        #expect(StringOperators.evaluate(.contains, "abcabd", "abd"))
        #expect(StringOperators.evaluate(.contains, "abc", ""))
        #expect(!StringOperators.evaluate(.contains, "ab", "abc"))
        #expect(StringOperators.evaluate(.beginsWith, "", ""))
    }

    @Test func likePatterns() {
        let cases: [(String, String, Bool)] = [
            ("*", "", true), ("?", "", false), ("?", "é", true), ("?", "e\u{301}", true), ("??", "e\u{301}", false),
            ("a*c", "abbbc", true), ("a*c", "abbbd", false), ("*b*", "abc", true), ("a\\*c", "a*c", true), ("a\\*c", "abc", false),
            ("a\\?", "a?", true), ("\\\\", "\\", true), ("abc\\", "abc\\", true), ("*a*a*a", "aaa", true), ("*a*a*a", "aa", false),
            ("e*", "e\u{301}x", false), ("?x", "e\u{301}x", true), ("*é*", "café au lait", true), ("a?c", "a\r\nc", true), ("a??c", "a\r\nc", false),
            ("*x", "😀x", true), ("", "", true), ("", "a", false),
        ]
        for (pattern, subject, expected) in cases {
            #expect(LikePattern(pattern).matches(subject) == expected, "\(pattern) ~ \(subject)")
            #expect(LikePattern.matches(subject, pattern: pattern) == expected)
        }
    }

    @Test func regexMatchesWholeString() throws {
        #expect(try RegexCache.matches("apple", pattern: "a|apple", caseInsensitive: false))
        #expect(try !RegexCache.matches("apple pie", pattern: "apple", caseInsensitive: false))
        #expect(try RegexCache.matches("APPLE", pattern: "apple", caseInsensitive: true))
        #expect(throws: StrataError.self) { try RegexCache.matches("x", pattern: "x)|(y", caseInsensitive: false) }
    }

    @Test func exactSumIsOrderIndependent() {
        var values: [Double] = [0.1, 0.2, 0.3, 1e16, -1e16, 3.14159, 1e-10, 2.5, -0.7]
        var reference = ExactDoubleSum()
        for v in values { reference.add(v) }
        var random = FixtureRandom(seed: 1)
        for _ in 0..<50 {
            values.shuffle(using: &random)
            var sum = ExactDoubleSum()
            for v in values { sum.add(v) }
            #expect(sum.value == reference.value)
        }
        var empty = ExactDoubleSum()
        #expect(empty.value == 0)
        empty.add(.infinity)
        empty.add(-.infinity)
        #expect(empty.value.isNaN)
        var simple = ExactDoubleSum()
        simple.add(0.1)
        simple.add(0.2)
        #expect(simple.value == 0.30000000000000004)
    }

    @Test("The exact Double sum rounds once, ties to even, and holds running totals past the largest Double")
    func exactSumRoundsOnceAndPassesTheLargestDouble() {
        func sum(_ values: [Double]) -> Double {
            var sum = ExactDoubleSum()
            for value in values { sum.add(value) }
            return sum.value
        }
        #expect(sum([1e16, 1, -1e16]) == 1)
        #expect(sum([.leastNonzeroMagnitude, .leastNonzeroMagnitude]) == 2 * .leastNonzeroMagnitude)
        #expect(sum([1, 0x1p-53]) == 1)  // a tie: to even
        #expect(sum([1, 0x1p-53, .leastNonzeroMagnitude]) == 1 + 0x1p-52)  // just past the tie
        #expect(sum([1 + 0x1p-52, 0x1p-53]) == 1 + 0x1p-51)  // a tie from odd: up
        #expect(sum([-1, -0x1p-53, -.leastNonzeroMagnitude]) == -(1 + 0x1p-52))
        #expect(sum([0x1p-1022, -.leastNonzeroMagnitude]) == 0x1p-1022 - .leastNonzeroMagnitude)
        // Past the largest Double on the way, in every order.
        let max = Double.greatestFiniteMagnitude
        for order in [[max, max, -max], [max, -max, max], [-max, max, max]] {
            #expect(sum(order) == max)
        }
        #expect(sum([max, max, -max, -max]) == 0)
        #expect(sum([max, max]) == .infinity)
        #expect(sum([-max, -max]) == -.infinity)
        // Half an ulp above the largest rounds (to even) to an infinity; less does not.
        #expect(sum([max, 0x1p970]) == .infinity)
        #expect(sum([max, 0x1p969]) == max)
        #expect(sum([.infinity, 1, -max]) == .infinity)
        #expect(sum([.infinity, -max, -max]).isNaN)  // inf plus a finite sum past -max
        #expect(sum([.infinity, -.infinity]).isNaN)
    }

    @Test("@sum of Decimals is exact whatever the order, then cut to a Decimal's digits; @avg truncates")
    func exactDecimalSumIsOrderIndependent() throws {
        func decimal(_ text: String) throws -> Decimal { try #require(Decimal(string: text, locale: nil)) }
        func total(_ values: [Decimal]) -> Decimal? {
            var accumulator = DecimalAccumulator()
            for value in values { accumulator.add(value) }
            return accumulator.total
        }
        // Foundation alone loses the small term when the large ones come
        // first; the exact sum keeps it in every order.
        let values = [try decimal("1e30"), try decimal("1e-30"), try decimal("-1e30")]
        var random = FixtureRandom(seed: 7)
        for _ in 0..<20 {
            #expect(total(values.shuffled(using: &random)) == (try decimal("1e-30")))
        }
        // More digits than a Decimal holds: the ones past its significand
        // are dropped, toward zero, as Decimal(string:) drops them.
        let long = [try decimal("12345678901234567890.123456789"), try decimal("0.0000000000000000000987654321")]
        #expect(total(long) == (try decimal("12345678901234567890.123456789000000000")))
        #expect(total(long.map { -$0 }) == (try decimal("-12345678901234567890.123456789000000000")))
        // Past Decimal's range: nil; empty: 0.
        let largest = try decimal(String(repeating: "9", count: 38) + "e127")
        #expect(total([largest, largest, largest, largest]) == nil)
        #expect(total([largest, largest, largest, largest, -largest, -largest, -largest]) == largest)
        #expect(total([]) == 0)
        // The average: the exact quotient, its digits past a Decimal's cut.
        var thirds = DecimalAccumulator()
        thirds.add(1)
        thirds.add(0)
        thirds.add(0)
        #expect(thirds.average == (try decimal("0." + String(repeating: "3", count: 39))))
        #expect(DecimalAccumulator().average == nil)
    }

    @Test func cachesAreThreadSafe() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<16 {
                group.addTask {
                    var ok = true
                    for j in 0..<200 {
                        let pattern = "p\((i + j) % 150).*"
                        let matched = try RegexCache.matches("p\((i + j) % 150)x", pattern: pattern, caseInsensitive: j % 2 == 0)
                        ok = ok && matched
                        ok = ok && LikePattern.matches("q\(j % 200)zz", pattern: "q\(j % 200)*")
                    }
                    return ok
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }
}

private func dec(_ text: String) -> PropertyValue { .decimal(Decimal(string: text) ?? 0) }
