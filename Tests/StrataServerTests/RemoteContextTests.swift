import Foundation
import StrataClient
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataWire
import Testing

/// The embedded `Context` working over a server through remote stores.
@Suite("Remote contexts", .timeLimit(.minutes(1)))
struct RemoteContextTests {
    static func container(_ server: TestServer, name: String) async throws -> RemoteContainer {
        try await RemoteContainer(
            model: BooksSample.model,
            configuration: ClientConfiguration(host: "127.0.0.1", port: server.port, clientName: name),
            transformers: BooksSample.transformers,
            transientRules: BooksSample.transientRules
        )
    }

    @Test("Insert, fetch, fetched properties and pushed merges across two remote containers")
    func seedScenario() async throws {
        let server = try await TestServer.start()
        let alpha = try await Self.container(server, name: "alpha")
        let beta = try await Self.container(server, name: "beta")
        let writer = alpha.newContext(name: "writer")
        let reader = beta.newContext(name: "reader")
        await reader.automaticallyMergeChanges()
        let bookUUID = UUID()

        let bookID = try await writer.perform { context in
            let book = try context.insert("Book")
            try book.setValue(.uuid(bookUUID), forKey: "uuid")
            try book.setValue(.string("The Crème River"), forKey: "title")
            try book.setValue(.integer(412), forKey: "pages")
            _ = try await context.save()
            return book.objectID
        }
        #expect(!bookID.isTemporary)
        #expect(bookID.storeIdentifier == server.container.coordinator.stores(for: "Book").first?.identifier)

        let found = try await reader.perform { context in
            let books = try await context.fetch(FetchRequest(entityName: "Book", format: "title CONTAINS[cd] 'creme'"))
            let sameByCanonical = try await context.fetch(FetchRequest(entityName: "Book", format: "canonicalTitle CONTAINS 'creme'"))
            let feedback = try await context.fetchedProperty("feedbackList", of: try #require(books.first))
            return (books.map(\.objectID), sameByCanonical.map(\.objectID), feedback.count)
        }
        #expect(found.0 == [bookID])
        #expect(found.1 == [bookID])
        #expect(found.2 == 0)

        try await writer.perform { context in
            let feedback = try context.insert("Feedback")
            try feedback.setValue(.uuid(bookUUID), forKey: "bookUUID")
            try feedback.setValue(.integer(4), forKey: "rating")
            _ = try await context.save()
        }
        // The server pushes the insert; the reader merges it and its
        // cached fetched property is evaluated again.
        var ratings: [PropertyValue] = []
        for _ in 0..<50 where ratings.isEmpty {
            ratings = try await reader.perform { context in
                let book = try await context.existingObject(with: bookID)
                return try await context.fetchedProperty("feedbackList", of: book).map { $0["rating"] }
            }
            if ratings.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(ratings == [.integer(4)])
        await alpha.close()
        await beta.close()
        try await server.stop()
    }

    @Test("Version conflicts between remote contexts resolve by the local merge policy")
    func conflicts() async throws {
        let server = try await TestServer.start()
        let alpha = try await Self.container(server, name: "alpha")
        let beta = try await Self.container(server, name: "beta")
        let first = alpha.newContext()
        let bookID = try await first.perform { context in
            let book = try context.insert("Book")
            try book.setValue(.uuid(UUID()), forKey: "uuid")
            try book.setValue(.string("T0"), forKey: "title")
            try book.setValue(.string("A0"), forKey: "author")
            _ = try await context.save()
            return book.objectID
        }
        let strict = beta.newContext(mergePolicy: .error)
        let lenient = beta.newContext(mergePolicy: .mergeByPropertyObjectTrump)
        // Both read version 1.
        for context in [strict, lenient] {
            _ = try await context.perform { try await $0.existingObject(with: bookID).persistedVersion }
        }
        try await first.perform { context in
            try context.object(with: bookID).setValue(.string("TA"), forKey: "title")
            _ = try await context.save()
        }
        let refused = await #expect(throws: StrataError.self) {
            try await strict.perform { context in
                try context.object(with: bookID).setValue(.string("AS"), forKey: "author")
                _ = try await context.save()
            }
        }
        #expect(refused?.code == .mergeConflict)
        #expect(refused?.conflicts.first?.currentVersion == 2)

        try await lenient.perform { context in
            try context.object(with: bookID).setValue(.string("AL"), forKey: "author")
            _ = try await context.save()
        }
        let stored = try await server.client("check").refresh([bookID.uriRepresentation]).objects.first
        #expect(try stored?.value("title") == .string("TA"))
        #expect(try stored?.value("author") == .string("AL"))
        #expect(stored?.version == 3)
        await alpha.close()
        await beta.close()
        try await server.stop()
    }
}
