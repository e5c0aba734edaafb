import Foundation
import StrataClient
import StrataModel
import StrataWire
import Testing

/// The Books & Feedback seed scenario, across two clients of one server.
@Suite("Seed scenario over the wire", .timeLimit(.minutes(1)))
struct SeedScenarioTests {
    @Test("A adds feedback; B, subscribed, is notified and its refresh shows feedbackList change")
    func feedbackAcrossClients() async throws {
        let server = try await TestServer.start()
        let a = server.client("client-a")
        let b = server.client("client-b")
        do {
            let bookUUID = UUID()
            let saved = try await a.save(Wire.save(inserts: [Wire.insertBook("book", title: "The River", uuid: bookUUID, pages: 320)]))
            let bookID = try #require(saved.inserted.first?.id)
            #expect(bookID.hasPrefix("strata://"))
            #expect(saved.versions[bookID] == 1)

            let before = try await b.refresh([bookID])
            #expect(before.objects.first?.fetched["feedbackList"]?.ids == [])

            let notifications = try await b.subscribe(entity: "Feedback")
            let feedback = try await a.save(Wire.save(inserts: [Wire.insertFeedback("fb", bookUUID: bookUUID, rating: 5, comment: "Lovely")]))
            let feedbackID = try #require(feedback.inserted.first?.id)

            let note = try #require(await next(notifications))
            #expect(note.inserted.map(\.id) == [feedbackID])
            #expect(note.inserted.first?.version == 1)
            #expect(note.origin == "client-a")

            let after = try await b.refresh([bookID])
            let book = try #require(after.objects.first)
            #expect(book.fetched["feedbackList"]?.ids == [feedbackID])
            #expect(try book.value("title") == .string("The River"))
            #expect(try book.value("canonicalTitle") == .string("the river"))

            // Remove it: the deletion is pushed and the list empties.
            _ = try await a.save(Wire.save(deletes: [Strata_V1_DeletedObject.with { $0.id = feedbackID; $0.baseVersion = 1 }]))
            let deletion = try #require(await next(notifications))
            #expect(deletion.deleted.map(\.id) == [feedbackID])
            let emptied = try await b.refresh([bookID])
            #expect(emptied.objects.first?.fetched["feedbackList"]?.ids == [])
        } catch {
            await a.close(); await b.close()
            try await server.stop()
            throw error
        }
        await a.close(); await b.close()
        try await server.stop()
    }

    @Test("Subscriptions filter by predicate and report changed keys with new versions")
    func predicateSubscription() async throws {
        let server = try await TestServer.start()
        let writer = server.client("writer")
        let watcher = server.client("watcher")
        defer { Task { await writer.close(); await watcher.close() } }
        let longBooks = try await watcher.subscribe(entity: "Book", predicate: "pages > 500")
        let saved = try await writer.save(Wire.save(inserts: [
            Wire.insertBook("short", title: "Short", pages: 90),
            Wire.insertBook("long", title: "Long", pages: 900),
        ]))
        let ids = Dictionary(uniqueKeysWithValues: saved.inserted.map { ($0.temporaryID, $0.id) })
        let first = try #require(await next(longBooks))
        #expect(first.inserted.map(\.id) == [ids["long"]])

        _ = try await writer.save(Wire.save(updates: [Wire.update(try #require(ids["long"]), baseVersion: 1, ["title": .string("Longer")])]))
        let second = try #require(await next(longBooks))
        #expect(second.updated.map(\.id) == [ids["long"]])
        #expect(second.updated.first?.version == 2)
        #expect(second.updated.first?.changedKeys.contains("title") == true)
        try await server.stop()
    }

    @Test("Fetch streams large results in batches, with compression when accepted")
    func batchedCompressedFetch() async throws {
        let server = try await TestServer.start()
        let client = server.client("bulk") { $0.acceptCompression = true; $0.compressRequests = true }
        defer { Task { await client.close() } }
        let inserts = (0..<1200).map { Wire.insertBook("b\($0)", title: "Book \($0) " + String(repeating: "x", count: 40), pages: Int64($0)) }
        let saved = try await client.save(Wire.save(inserts: inserts))
        #expect(saved.inserted.count == 1200)
        let info = try await client.connect()
        #expect(info.compression)

        var request = Wire.fetch("Book", "pages >= 100", sort: ["-pages"])
        request.batchSize = 250
        var batches: [Strata_V1_FetchBatch] = []
        for try await batch in try await client.fetchBatches(request) { batches.append(batch) }
        #expect(batches.count == 5) // 1100 results: 4 full batches and a final one
        #expect(batches.last?.count == 1100)
        let pages = try batches.flatMap(\.objects).map { try $0.value("pages") }
        #expect(pages.first == .integer(1199))
        #expect(pages.last == .integer(100))
        #expect(pages.count == 1100)

        #expect(try await client.count("Book", predicate: "pages < 100") == 100)
        let ids = try await client.fetch(Wire.fetch("Book", "pages < 10", resultType: .objectIds))
        #expect(ids.objectIDs.count == 10)
        try await server.stop()
    }

    @Test("Every attribute type travels exactly through a save and a fetch")
    func exactValues() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        defer { Task { await client.close() } }
        let uuid = UUID()
        let date = Date(timeIntervalSinceReferenceDate: 712_345_678.123456)
        let price = try #require(Decimal(string: "12345678901234567890.123456789"))
        let cover = Data([1, 2, 3, 250])
        var insert = Wire.insertBook("exact", title: "Exact", uuid: uuid, pages: Int64(Int32.max))
        insert.values["publishDate"] = PropertyValue.date(date).wire
        insert.values["price"] = PropertyValue.decimal(price).wire
        insert.values["coverColor"] = PropertyValue.binary(cover).wire
        let saved = try await client.save(Wire.save(inserts: [insert]))
        let id = try #require(saved.inserted.first?.id)
        let object = try #require(try await client.refresh([id]).objects.first)
        #expect(try object.value("uuid") == .uuid(uuid))
        #expect(try object.value("publishDate") == .date(date))
        #expect(try object.value("price") == .decimal(price))
        #expect(try object.value("pages") == .integer(Int64(Int32.max)))
        #expect(try object.value("coverColor") == .binary(cover))
        // Decimal arithmetic stays exact on the server: 0.1 + 0.2 == 0.3.
        var sum = Wire.insertBook("sum", title: "Sum", pages: 1)
        sum.values["price"] = PropertyValue.decimal(try #require(Decimal(string: "0.3"))).wire
        _ = try await client.save(Wire.save(inserts: [sum]))
        #expect(try await client.count("Book", predicate: "price == 0.3") == 1)
        try await server.stop()
    }

    @Test("Model, stats and ping describe the server")
    func modelStatsPing() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        defer { Task { await client.close() } }
        let info = try await client.connect()
        #expect(info.modelName == "BooksAndFeedback")
        #expect(info.version.major == 1)
        #expect(info.entityVersionHashes["Book"]?.count == 32)
        _ = try await client.ping()
        let model = try await client.model()
        let book = try #require(model.entities.first { $0.name == "Book" })
        #expect(book.attributes.first { $0.name == "price" }?.type == "Decimal")
        #expect(book.fetchedProperties.map(\.name) == ["feedbackList"])
        #expect(Set(model.configurations.map(\.name)) == ["Book", "Feedback"])
        #expect(model.configurations.allSatisfy { $0.storeType == "sqlite" })
        _ = try await client.count("Book")
        let stats = try await client.stats()
        #expect(stats.connectionsOpen >= 1)
        #expect(stats.operations.first { $0.operation == "fetch" }?.requests == 1)
        #expect(stats.stores.count == 2)
        #expect(stats.stores.allSatisfy { $0.sizeBytes > 0 })
        try await server.stop()
    }
}
