import Foundation
import Testing
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataSQLite

/// A context with a read restriction (a server's read rules) judges
/// related objects as the caller may see them, in the store's query and
/// in the evaluator (unsaved objects, in-memory stores) alike.
@Suite struct ReadRestrictionTests {
    static let model = ObjectModel(name: "Shelf", entities: [
        EntityDescription(name: "Writer", attributes: [
            AttributeDescription(name: "name", type: .string, isOptional: true),
            AttributeDescription(name: "owner", type: .string, isOptional: true),
        ], relationships: [RelationshipDescription(name: "works", destination: "Work", inverse: "writer", toMany: true)]),
        EntityDescription(name: "Work", attributes: [
            AttributeDescription(name: "title", type: .string, isOptional: true),
            AttributeDescription(name: "pages", type: .integer32, isOptional: true),
        ], relationships: [RelationshipDescription(name: "writer", destination: "Writer", inverse: "works")]),
    ])

    /// Bob's view: writers he owns, works not titled Secret.
    static func restriction() throws -> ReadRestriction {
        let resolver = PredicateResolver(model: model)
        let writer = try resolver.resolve(format: "owner == 'bob'", entity: "Writer")
        let work = try resolver.resolve(format: "title != 'Secret'", entity: "Work")
        return { entity in entity == "Writer" ? writer : work }
    }

    static func insert(_ context: isolated Context, _ entity: String, _ values: [String: PropertyValue]) throws -> ManagedObject {
        let object = try context.insert(entity)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    @Test(arguments: [StoreDescription.StoreType.sqlite, .inMemory], [false, true])
    func relatedObjectsAreJudgedAsTheCallerSeesThem(_ kind: StoreDescription.StoreType, unsaved: Bool) async throws {
        let directory = TemporaryDirectory()
        let container = try await PersistentContainer(model: Self.model, storeDescriptions: ContextFixture.descriptions(kind, model: Self.model, in: directory.url), factory: .standard)
        let context = Context(coordinator: container.coordinator, readRestriction: try Self.restriction())
        let names = try await context.perform { context -> [ObjectID: String] in
            let alice = try Self.insert(context, "Writer", ["name": .string("Alice"), "owner": .string("alice")])
            let bob = try Self.insert(context, "Writer", ["name": .string("Bob"), "owner": .string("bob")])
            let objects = [
                alice, bob,
                try Self.insert(context, "Work", ["title": .string("Alice's"), "pages": .integer(1), "writer": .object(alice.objectID)]),
                try Self.insert(context, "Work", ["title": .string("Bob's"), "pages": .integer(10), "writer": .object(bob.objectID)]),
                try Self.insert(context, "Work", ["title": .string("Secret"), "pages": .integer(5), "writer": .object(bob.objectID)]),
            ]
            // Saved, or left pending so that the evaluator judges them.
            if !unsaved { try await context.save() }
            var names: [ObjectID: String] = [:]
            for object in objects {
                if case .string(let text) = try object.value(forKey: object.entityName == "Writer" ? "name" : "title") { names[object.objectID] = text }
            }
            return names
        }
        func matching(_ entity: String, _ format: String) async throws -> Set<String> {
            let ids = try await context.fetchObjectIDs(FetchRequest(entityName: entity, format: format))
            return Set(ids.compactMap { names[$0] })
        }
        #expect(try await matching("Writer", "TRUEPREDICATE") == ["Bob"])
        #expect(try await matching("Work", "TRUEPREDICATE") == ["Alice's", "Bob's"])
        #expect(try await matching("Work", "writer.name == 'Alice'") == [])
        #expect(try await matching("Work", "writer.name == 'Bob'") == ["Bob's"])
        #expect(try await matching("Writer", "ANY works.title == 'Secret'") == [])
        #expect(try await matching("Writer", "works.@count == 1") == ["Bob"])
        #expect(try await matching("Writer", "SUBQUERY(works, $w, $w.pages > 0).@count == 1") == ["Bob"])
        #expect(try await matching("Writer", "ALL works.title BEGINSWITH 'Bob'") == ["Bob"])
        #expect(try await context.count(FetchRequest(entityName: "Work", format: "writer != nil")) == 1)
        await #expect(throws: StrataError.self) { _ = try await context.fetchObjectIDs(FetchRequest(entityName: "Writer", format: "works.@sum.pages > 0")) }
        try await container.close()
    }
}

@Suite struct SampleSeedTests {
    @Test("Seeding the sample twice writes it once: the second save clashes on the books' UUIDs before any feedback")
    func seedsOnce() async throws {
        let directory = TemporaryDirectory()
        let container = try await PersistentContainer(model: BooksSample.model, storeDescriptions: BooksSample.sqliteStores(in: directory.url), factory: .standard,
                                                      transformers: BooksSample.transformers, transientRules: BooksSample.transientRules)
        #expect(try await BooksSample.seed(Context(coordinator: container.coordinator)))
        let context = Context(coordinator: container.coordinator)
        let books = try await context.count(FetchRequest(entityName: "Book"))
        let feedback = try await context.count(FetchRequest(entityName: "Feedback"))
        #expect(books == 12)
        #expect(try await BooksSample.seed(Context(coordinator: container.coordinator)) == false)
        #expect(try await context.count(FetchRequest(entityName: "Book")) == books)
        #expect(try await context.count(FetchRequest(entityName: "Feedback")) == feedback)
        try await container.close()
    }
}
