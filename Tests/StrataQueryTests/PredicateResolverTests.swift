import Foundation
import Testing
import StrataModel
@testable import StrataQuery

/// A small library model for resolver tests.
enum ResolverModel {
    static let model = ObjectModel(name: "Library", entities: [
        EntityDescription(name: "Author", attributes: [
            .init(name: "name", type: .string),
            .init(name: "born", type: .date, isOptional: true),
        ], relationships: [
            .init(name: "books", destination: "Book", inverse: "author", toMany: true),
        ]),
        EntityDescription(name: "Book", attributes: [
            .init(name: "title", type: .string),
            .init(name: "uuid", type: .uuid),
            .init(name: "pages", type: .integer32, isOptional: true),
            .init(name: "price", type: .decimal, isOptional: true),
            .init(name: "rating", type: .double, isOptional: true),
            .init(name: "inPrint", type: .boolean, isOptional: true),
            .init(name: "published", type: .date, isOptional: true),
            .init(name: "cover", type: .binary, isOptional: true),
            .init(name: "link", type: .uri, isOptional: true),
            .init(name: "scratch", type: .string, isOptional: true, isTransient: true),
            .init(name: "canonicalTitle", type: .string, isOptional: true, isDerived: true, derivationExpression: "canonical:(title)"),
            .init(name: "tagCount", type: .integer64, isOptional: true, isDerived: true, derivationExpression: "tags.@count"),
        ], relationships: [
            .init(name: "author", destination: "Author", inverse: "books"),
            .init(name: "tags", destination: "Tag", inverse: "books", toMany: true),
        ], fetchedProperties: [
            .init(name: "sameAuthor", entity: "Book", predicate: "author == $FETCH_SOURCE.author"),
        ]),
        EntityDescription(name: "EBook", parent: "Book", attributes: [
            .init(name: "sizeBytes", type: .integer64, isOptional: true),
        ]),
        EntityDescription(name: "Tag", attributes: [
            .init(name: "name", type: .string),
        ], relationships: [
            .init(name: "books", destination: "Book", inverse: "tags", toMany: true),
        ]),
    ])

    static let resolver = PredicateResolver(model: model)

    static func resolve(_ format: String, entity: String = "Book", variables: [String: VariableValue] = [:]) throws -> QueryPredicate {
        try resolver.resolve(format: format, entity: entity, variables: variables)
    }

    static func error(_ format: String, entity: String = "Book", variables: [String: VariableValue] = [:]) -> StrataError? {
        do {
            _ = try resolve(format, entity: entity, variables: variables)
            return nil
        } catch let error as StrataError {
            return error
        } catch {
            return StrataError(.predicateType, "unexpected \(error)")
        }
    }
}

@Suite struct PredicateResolverTests {
    let model = ResolverModel.model

    private func attribute(_ name: String, _ entity: String = "Book") throws -> AttributeDescription {
        try #require(model.attribute(named: name, in: entity))
    }

    @Test func integerComparisonStaysInteger() throws {
        let p = try ResolverModel.resolve("pages > 100")
        #expect(p == .compare(QueryComparison(lhs: .attribute([], try attribute("pages")), op: .greaterThan, rhs: .constant(.integer(100)), domain: .integer)))
    }

    @Test func fractionalLiteralWidensIntegerToDouble() throws {
        let p = try ResolverModel.resolve("pages >= 1.5")
        #expect(p == .compare(QueryComparison(lhs: .attribute([], try attribute("pages")), op: .greaterThanOrEqual, rhs: .constant(.double(1.5)), domain: .double)))
    }

    @Test func decimalLiteralIsExact() throws {
        let p = try ResolverModel.resolve("price == 0.3")
        guard case .compare(let c) = p, case .constant(.decimal(let d)) = c.rhs else {
            Issue.record("expected a decimal constant, got \(p)")
            return
        }
        #expect(c.domain == .decimal)
        #expect(d == Decimal(string: "0.1")! + Decimal(string: "0.2")!)
    }

    @Test func booleanComparesAsInteger() throws {
        let p = try ResolverModel.resolve("inPrint == YES")
        #expect(p == .compare(QueryComparison(lhs: .attribute([], try attribute("inPrint")), op: .equal, rhs: .constant(.integer(1)), domain: .integer)))
    }

    @Test func stringOptionsAreKept() throws {
        let p = try ResolverModel.resolve("title CONTAINS[cd] 'creme'")
        #expect(p == .compare(QueryComparison(lhs: .attribute([], try attribute("title")), op: .contains, rhs: .constant(.string("creme")), domain: .string, options: [.caseInsensitive, .diacriticInsensitive])))
    }

    @Test func uuidFromStringLiteral() throws {
        let uuid = UUID()
        let p = try ResolverModel.resolve("uuid == '\(uuid.uuidString)'")
        guard case .compare(let c) = p else { Issue.record("not a comparison"); return }
        #expect(c.rhs == .constant(.uuid(uuid)))
        #expect(c.domain == .uuid)
    }

    @Test func castDate() throws {
        let p = try ResolverModel.resolve("published > CAST(0, \"NSDate\")")
        guard case .compare(let c) = p else { Issue.record("not a comparison"); return }
        #expect(c.rhs == .constant(.date(Date(timeIntervalSinceReferenceDate: 0))))
        #expect(c.domain == .date)
    }

    @Test func toOnePathBecomesSteps() throws {
        let p = try ResolverModel.resolve("author.name BEGINSWITH 'A'")
        guard case .compare(let c) = p, case .attribute(let steps, let attr) = c.lhs else { Issue.record("\(p)"); return }
        #expect(steps.map(\.relationship.name) == ["author"])
        #expect(attr.name == "name")
    }

    @Test func toManyPathIsImplicitAny() throws {
        let p = try ResolverModel.resolve("tags.name == 'sf'")
        guard case .quantified(.any, let path, .compare(let inner)) = p else { Issue.record("\(p)"); return }
        #expect(path.toMany.relationship.name == "tags")
        #expect(inner.lhs == .attribute([], try attribute("name", "Tag")))
    }

    @Test func quantifiers() throws {
        for (text, q) in [("ANY tags.name == 'x'", Quantifier.any), ("SOME tags.name == 'x'", .any), ("ALL tags.name == 'x'", .all), ("NONE tags.name == 'x'", .none)] {
            let p = try ResolverModel.resolve(text)
            guard case .quantified(let got, _, _) = p else { Issue.record("\(text): \(p)"); continue }
            #expect(got == q, "\(text)")
        }
    }

    @Test func inToManyKeyPath() throws {
        let p = try ResolverModel.resolve("'sf' IN tags.name")
        guard case .quantified(.any, _, .compare(let inner)) = p else { Issue.record("\(p)"); return }
        #expect(inner.op == .equal)
        #expect(inner.rhs == .constant(.string("sf")))
    }

    @Test func aggregates() throws {
        let count = try ResolverModel.resolve("books.@count > 2", entity: "Author")
        guard case .compare(let c) = count, case .aggregate(.count, let path, nil) = c.lhs else { Issue.record("\(count)"); return }
        #expect(path.toMany.relationship.name == "books")
        #expect(c.domain == .integer)

        let sum = try ResolverModel.resolve("books.@sum.price > 10", entity: "Author")
        guard case .compare(let s) = sum else { Issue.record("\(sum)"); return }
        #expect(s.domain == .decimal)

        let avg = try ResolverModel.resolve("books.@avg.pages > 10", entity: "Author")
        guard case .compare(let a) = avg else { Issue.record("\(avg)"); return }
        #expect(a.domain == .double)
    }

    @Test func subqueryCount() throws {
        let p = try ResolverModel.resolve("SUBQUERY(books, $b, $b.pages > 100 AND $b.title BEGINSWITH 'A').@count > 0", entity: "Author")
        guard case .compare(let c) = p, case .subqueryCount(let path, .and(let parts)) = c.lhs else { Issue.record("\(p)"); return }
        #expect(path.toMany.relationship.name == "books")
        #expect(parts.count == 2)
    }

    @Test func variablesAreSubstituted() throws {
        let uuid = UUID()
        let p = try ResolverModel.resolve("uuid == $U AND pages IN $P", variables: ["U": .value(.uuid(uuid)), "P": .list([.integer(1), .integer(2)])])
        guard case .and(let parts) = p, case .compare(let a) = parts[0], case .compare(let b) = parts[1] else { Issue.record("\(p)"); return }
        #expect(a.rhs == .constant(.uuid(uuid)))
        #expect(b.rhs == .list([.integer(1), .integer(2)]))
    }

    @Test func fetchSourceKeyPath() throws {
        let author = ObjectID(storeIdentifier: "S", entityName: "Author", key: .permanent(7))
        let book = ObjectID(storeIdentifier: "S", entityName: "Book", key: .permanent(1))
        let p = try ResolverModel.resolve("author == $FETCH_SOURCE.author", variables: ["FETCH_SOURCE": .object(book, values: ["author": .object(author)])])
        guard case .compare(let c) = p else { Issue.record("\(p)"); return }
        #expect(c.domain == .object)
        #expect(c.rhs == .constant(.object(author)))
    }

    @Test func objectIdentityInList() throws {
        let ids = [ObjectID(storeIdentifier: "S", entityName: "Tag", key: .permanent(1))]
        let p = try ResolverModel.resolve("SELF IN $tags", entity: "Tag", variables: ["tags": .value(.objects(ids))])
        guard case .compare(let c) = p else { Issue.record("\(p)"); return }
        #expect(c.lhs == .object([]))
        #expect(c.rhs == .list([.object(ids[0])]))
    }

    @Test func subentityAttributeIsKnownOnlyBelow() throws {
        #expect(throws: Never.self) { try ResolverModel.resolve("sizeBytes > 10", entity: "EBook") }
        #expect(ResolverModel.error("sizeBytes > 10")?.code == .predicateType)
        #expect(throws: Never.self) { try ResolverModel.resolve("title == 'x'", entity: "EBook") }
    }

    @Test(arguments: [
        ("nosuch == 1", "entity 'Book' has no property 'nosuch'"),
        ("Title == 'x'", "did you mean 'title'?"),
        ("title > 5", "cannot compare a string value with a integer value"),
        ("pages == 'ten'", "cannot compare a integer value with a string value"),
        ("published > 5", "CAST(seconds since 2001"),
        ("tags.@sum.name > 1", "@sum needs a numeric attribute"),
        ("title.length > 1", "the key path cannot continue with 'length'"),
        ("scratch == 'x'", "is transient"),
        ("sameAuthor.@count > 0", "fetched property"),
        ("pages CONTAINS 1", "CONTAINS applies only to strings"),
        ("pages ==[c] 1", "[c] and [d] apply only to string comparisons"),
        ("author < $A", "variable $A has no value"),
        ("title MATCHES '(('", "not a valid regular expression"),
        ("uuid == 'not-a-uuid'", "is not a UUID"),
        ("pages BETWEEN {1, 2, 3}", "{lower, upper} after BETWEEN"),
        ("ANY pages > 1", "ANY needs a key path through a to-many relationship"),
    ])
    func typeErrors(format: String, expected: String) {
        let error = ResolverModel.error(format)
        #expect(error != nil, "\(format) should fail")
        #expect(error?.message.contains(expected) == true, "\(format): \(error?.message ?? "no error")")
    }

    @Test func betweenVariableNeedsTwoBounds() {
        let error = ResolverModel.error("pages BETWEEN $R", variables: ["R": .list([.integer(1), .integer(2), .integer(3)])])
        #expect(error?.message.contains("exactly two bounds") == true, "\(String(describing: error))")
        #expect(ResolverModel.error("pages BETWEEN $R", variables: ["R": .list([.integer(1), .integer(2)])]) == nil)
    }

    @Test func errorPointsAtTheKeyPath() throws {
        let error = try #require(ResolverModel.error("pages > 1 AND nosuch == 2"))
        let lines = error.message.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first?.hasPrefix("line 1, column 15:") == true, "\(error.message)")
        #expect(lines.count == 3)
        #expect(lines.last.map { $0.firstIndex(of: "^").map { lines.last!.distance(from: lines.last!.startIndex, to: $0) } } == 14)
    }

    @Test func sortDescriptors() throws {
        let keys = try ResolverModel.resolver.resolveSortDescriptors([SortDescriptor("author.name"), SortDescriptor("title", ascending: false, caseInsensitive: true)], entity: "Book")
        #expect(keys.count == 2)
        #expect(keys[0].steps.map(\.relationship.name) == ["author"])
        #expect(keys[1].caseInsensitive && !keys[1].ascending)
        #expect(throws: StrataError.self) { try ResolverModel.resolver.resolveSortDescriptors([SortDescriptor("tags.name")], entity: "Book") }
        #expect(throws: StrataError.self) { try ResolverModel.resolver.resolveSortDescriptors([SortDescriptor("nosuch")], entity: "Book") }
    }

    @Test func sortDescriptorParsing() {
        #expect(SortDescriptor(parsing: "-title[c]") == SortDescriptor("title", ascending: false, caseInsensitive: true))
        #expect(SortDescriptor(parsing: "author.name") == SortDescriptor("author.name"))
        #expect(SortDescriptor(parsing: "bad key") == nil)
    }

    @Test func derivations() throws {
        let resolver = ResolverModel.resolver
        let canonical = try resolver.resolveDerivation(of: try attribute("canonicalTitle"), in: "Book")
        #expect(canonical == .function(.canonical, [.attribute([], try attribute("title"))]))
        let count = try resolver.resolveDerivation(of: try attribute("tagCount"), in: "Book")
        guard case .aggregate(.count, _, nil) = count else { Issue.record("\(count)"); return }
        let bad = AttributeDescription(name: "x", type: .integer32, isDerived: true, derivationExpression: "canonical:(title)")
        #expect(throws: StrataError.self) { try resolver.resolveDerivation(of: bad, in: "Book") }
    }

    @Test func modelValidatorChecksExpressions() {
        var entities = ResolverModel.model.entities
        entities[1].fetchedProperties.append(.init(name: "broken", entity: "Book", predicate: "nosuch == $FETCH_SOURCE.title"))
        entities[1].fetchedProperties.append(.init(name: "badSource", entity: "Book", predicate: "title == $FETCH_SOURCE.nosuch"))
        entities[1].attributes.append(.init(name: "badDerived", type: .string, isOptional: true, isDerived: true, derivationExpression: "pages.@count"))
        let model = ObjectModel(name: "Broken", entities: entities, fetchRequestTemplates: [
            .init(name: "byTitle", entity: "Book", predicate: "title == $T"),
            .init(name: "bad", entity: "Book", predicate: "title == "),
        ])
        let errors = ModelValidator.diagnostics(for: model).filter { $0.severity == .error }
        let text = errors.map(\.description)
        #expect(errors.count == 4, "\(text)")
        #expect(text.contains { $0.contains("Book.broken") && $0.contains("no property 'nosuch'") })
        #expect(text.contains { $0.contains("Book.badSource") && $0.contains("no property 'nosuch'") })
        #expect(text.contains { $0.contains("Book.badDerived") })
        #expect(text.contains { $0.contains("fetch request 'bad'") })
        #expect(ModelValidator.diagnostics(for: ResolverModel.model).filter { $0.severity == .error }.isEmpty)
    }
}
