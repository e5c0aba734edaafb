import Foundation
import GRDB
import StrataModel
import Testing
@testable import StrataQuery

/// Variables compiled as parameters: a statement that binds every use of
/// a variable, rebound to other values, is exactly the statement compiled
/// for those values; a statement whose SQL depends on a value does not
/// claim to bind it.
@Suite struct QueryParameterTests {
    private let resolver = PredicateResolver(model: FixtureModel.model)

    /// `format` resolved for `Book` with `variables` and compiled (a fetch
    /// that does not resolve fails the test).
    private func compiled(_ format: String, _ variables: [String: VariableValue], counting: Bool = false) throws -> (query: CompiledQuery, predicate: StrataQuery.Predicate) {
        let compiler = SQLQueryCompiler(schema: try SQLSchema(model: FixtureModel.model))
        let predicate = try PredicateParser.parse(format)
        let request = FetchRequest(entityName: "Book", predicate: predicate, sortDescriptors: [SortDescriptor("pages")], fetchLimit: 20, fetchOffset: 3)
        let resolved = try resolver.resolve(request, variables: variables, source: format)
        return (counting ? try compiler.countQuery(resolved) : try compiler.rowQuery(resolved), predicate)
    }

    /// Predicates whose every variable is a parameter, with a maker of
    /// values for their variables (`i` varies them).
    private static let bound: [(format: String, values: @Sendable (Int) -> [String: PropertyValue])] = [
        ("pages >= $LOW AND pages <= $HIGH", { ["LOW": .integer(Int64($0 * 7 - 50)), "HIGH": .integer(Int64($0 * 7 + 9))] }),
        ("$LOW <= pages AND copies != $C", { ["LOW": .integer(Int64($0)), "C": .integer(Int64.max - Int64($0))] }),
        ("rating > $R", { ["R": .double(Double($0) / 3 - 2)] }),
        ("rating > $R", { ["R": .integer(Int64($0) - 5)] }),
        ("price == $P OR price < $Q", { ["P": .decimal(Decimal($0) / 8), "Q": .integer(Int64($0))] }),
        ("price >= $P", { ["P": .double(Double($0) * 1.25)] }),
        ("published < $D", { ["D": .date(Date(timeIntervalSinceReferenceDate: Double($0) * 86_400.5))] }),
        ("title ==[cd] $T", { ["T": .string($0 % 3 == 0 ? "Ünïcode \($0)" : ($0 % 3 == 1 ? "nul\u{0}\($0)" : "plain \($0)"))] }),
        ("author.name != $N AND inPrint == $B", { ["N": .string("Ada \($0)"), "B": .boolean($0 % 2 == 0)] }),
        ("isbn == $U", { _ in ["U": .uuid(UUID())] }),
        ("link == $L", { ["L": .uri("https://example.com/\($0)")] }),
        ("SUBQUERY(chapters, $c, $c.words > $W).@count > 0", { ["W": .integer(Int64($0 * 100))] }),
        ("pages == $A AND $A == pages AND NOT (weight < $A)", { ["A": .integer(Int64($0))] }),
        ("pages == $A OR pages == $B OR pages == 7 OR title == $T", { ["A": .integer(Int64($0)), "B": .integer(Int64($0) + 1), "T": .string("t\($0)")] }),
    ]

    @Test("A statement rebound to other values is the one compiled for them")
    func reboundIsCompiledAfresh() throws {
        for counting in [false, true] {
            for (format, values) in Self.bound {
                let (template, predicate) = try compiled(format, values(1).mapValues(VariableValue.value), counting: counting)
                #expect(template.bindsEveryVariable(of: predicate), "\(format)")
                #expect(!template.parameters.isEmpty, "\(format)")
                for i in 2...12 {
                    let variables = values(i).mapValues(VariableValue.value)
                    let fresh = try compiled(format, variables, counting: counting).query
                    let rebound = template.rebinding(variables)
                    #expect(rebound == fresh, "\(format) with \(variables)")
                }
            }
        }
    }

    @Test("Where a value shapes the statement, the statement does not claim to bind it")
    func valuesThatShapeTheStatementAreNotParameters() throws {
        let cases: [(String, [String: VariableValue])] = [
            ("pages IN $LIST", ["LIST": .list([.integer(1), .integer(2)])]),
            ("title BEGINSWITH $P", ["P": .value(.string("a"))]),
            ("title LIKE $P", ["P": .value(.string("a*"))]),
            ("title < $T", ["T": .value(.string("m"))]),
            ("pages == $X", ["X": .value(.null)]),
            ("pages > $X", ["X": .value(.null)]),
            ("ANY tags.name == $N", ["N": .value(.string("t"))]),
            ("author == $WHO", ["WHO": .value(.object(FixtureModel.id("Author", 1)))]),
            ("pages BETWEEN {$LOW, 10}", ["LOW": .value(.integer(1))]),
            ("pages > $OBJ.pages", ["OBJ": .object(FixtureModel.id("Book", 1), values: ["pages": .integer(3)])]),
            ("title == $A AND title BEGINSWITH $A", ["A": .value(.string("x"))]),
            ("{1, 2} CONTAINS $P", ["P": .value(.integer(1))]),
            // One use copied into the SQL twice (`IN` with nil writes its
            // left side twice) beside another use written into the SQL.
            ("SUBQUERY(chapters, $c, $c.title == $T).@count IN {1, nil} OR title BEGINSWITH $T", ["T": .value(.string("A"))]),
            ("SUBQUERY(chapters, $c, $c.words > $W).@count IN {1, nil} OR ANY chapters.words > $W", ["W": .value(.integer(5))]),
        ]
        for (format, variables) in cases {
            let (query, predicate) = try compiled(format, variables)
            #expect(!query.bindsEveryVariable(of: predicate), "\(format)")
        }
        // A use copied twice is still one use, bound in both places.
        let copied = "SUBQUERY(chapters, $c, $c.title == $T).@count IN {1, nil}"
        let (template, predicate) = try compiled(copied, ["T": .value(.string("A"))])
        #expect(template.parameters.count == 2 && template.bindsEveryVariable(of: predicate))
        #expect(template.rebinding(["T": .value(.string("B"))]) == (try compiled(copied, ["T": .value(.string("B"))]).query))
        // Uses that cannot be told apart (no positions) never bind.
        let unplaced = StrataQuery.Predicate.and([
            .comparison(Comparison(lhs: .keyPath(.evaluatedObject, ["pages"], SourceRange(start: 0, end: 0)), op: .greaterThan, rhs: .keyPath(.variable("A"), [], SourceRange(start: 0, end: 0)), range: SourceRange(start: 0, end: 0))),
            .comparison(Comparison(lhs: .keyPath(.evaluatedObject, ["title"], SourceRange(start: 0, end: 0)), op: .beginsWith, rhs: .keyPath(.variable("A"), [], SourceRange(start: 0, end: 0)), range: SourceRange(start: 0, end: 0))),
        ])
        let unplacedQuery = CompiledQuery(sql: "", arguments: [.null], parameters: [QueryParameter(index: 0, use: VariableUse(name: "A", range: SourceRange(start: 0, end: 0)), domain: .integer, options: [])])
        #expect(!unplacedQuery.bindsEveryVariable(of: unplaced))
        // Literals alone need nothing bound.
        let literal = try compiled("pages > 3 AND title == 'x'", [:])
        #expect(literal.query.parameters.isEmpty && literal.query.bindsEveryVariable(of: literal.predicate))
    }

    @Test("A statement that matches regular expressions says so")
    func regularExpressionsAreFound() throws {
        #expect(try compiled("title MATCHES 'a.*'", [:]).query.matchesRegularExpressions)
        #expect(try compiled("title MATCHES[c] $P OR pages > 3", ["P": .value(.string("b+"))]).query.matchesRegularExpressions)
        #expect(try !compiled("title BEGINSWITH 'strata_matches('", [:]).query.matchesRegularExpressions)
        #expect(try !compiled("pages > 3", [:]).query.matchesRegularExpressions)
    }

    @Test("A kept statement holds no caller's value; rebinding sets them all")
    func keptStatementsHoldNoValues() throws {
        let (template, _) = try compiled("title ==[c] $T AND pages > 3", ["T": .value(.string("secret"))])
        let kept = template.withoutParameterValues
        #expect(!kept.arguments.contains(.text("secret")))
        #expect(kept.arguments.contains(.integer(3)))
        #expect(kept.rebinding(["T": .value(.string("secret"))]) == template)
    }

    @Test("A value that does not bind as the statement's did is left to a fresh compile")
    func valuesThatDoNotBindAreRefused() throws {
        let (template, _) = try compiled("rating > $R AND pages == $P", ["R": .value(.double(1)), "P": .value(.integer(2))])
        #expect(template.rebinding(["R": .value(.null), "P": .value(.integer(2))]) == nil)
        #expect(template.rebinding(["R": .value(.double(1))]) == nil)
        #expect(template.rebinding(["R": .list([.double(1)]), "P": .value(.integer(2))]) == nil)
        #expect(template.rebinding(["R": .value(.string("x")), "P": .value(.integer(2))]) == nil)
        #expect(template.rebinding(["R": .value(.double(2)), "P": .value(.integer(3))]) != nil)
    }
}
