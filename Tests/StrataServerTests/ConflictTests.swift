import Foundation
import StrataClient
import StrataModel
import StrataWire
import Testing

/// Version conflicts between two clients, under every merge policy.
@Suite("Conflicts between clients", .timeLimit(.minutes(1)))
struct ConflictTests {
    struct Case: Sendable, CustomStringConvertible {
        var policy: Strata_V1_MergePolicy
        /// Title and author after B's save (nil: B's save fails).
        var expected: (title: String, author: String)?
        var description: String { "\(policy)" }
    }

    static let cases: [Case] = [
        Case(policy: .error, expected: nil),
        Case(policy: .mergeByPropertyStoreTrump, expected: ("TA", "AB")),
        Case(policy: .mergeByPropertyObjectTrump, expected: ("TB", "AB")),
        Case(policy: .overwrite, expected: ("TB", "AB")),
        Case(policy: .rollback, expected: ("TA", "A0")),
    ]

    @Test("A and B change the same book from version 1", arguments: cases)
    func conflict(_ testCase: Case) async throws {
        let server = try await TestServer.start()
        let a = server.client("a")
        let b = server.client("b")
        defer { Task { await a.close(); await b.close() } }
        let saved = try await a.save(Wire.save(inserts: [Wire.insertBook("book", title: "T0", author: "A0")]))
        let id = try #require(saved.inserted.first?.id)

        // A changes the title: version 2.
        let first = try await a.save(Wire.save(updates: [Wire.update(id, baseVersion: 1, ["title": .string("TA")])]))
        #expect(first.versions[id] == 2)

        // B, still at version 1, changes title and author.
        var update = Wire.update(id, baseVersion: 1, ["title": .string("TB"), "author": .string("AB")])
        update.baseValues = ["title": PropertyValue.string("T0").wire, "author": PropertyValue.string("A0").wire]
        let request = Wire.save(updates: [update], policy: testCase.policy)
        if let expected = testCase.expected {
            let response = try await b.save(request)
            let object = try #require(try await a.refresh([id]).objects.first)
            #expect(try object.value("title") == .string(expected.title))
            #expect(try object.value("author") == .string(expected.author))
            if testCase.policy != .rollback {
                #expect(response.versions[id] == 3)
                #expect(object.version == 3)
            }
        } else {
            let error = await #expect(throws: StrataClientError.self) { try await b.save(request) }
            #expect(error?.code == .aborted)
            #expect(error?.strataCode == 133020)
            let conflict = try #require(error?.conflicts.first)
            #expect(conflict.objectID == id)
            #expect(conflict.expectedVersion == 1)
            #expect(conflict.currentVersion == 2)
            #expect(conflict.persistedValues["title"] == PropertyValue.string("TA").wire)
            #expect(conflict.cachedValues["title"] == PropertyValue.string("T0").wire)
            #expect(conflict.localChanges["author"] == PropertyValue.string("AB").wire)
            let object = try #require(try await a.refresh([id]).objects.first)
            #expect(try object.value("title") == .string("TA"))
            #expect(try object.value("author") == .string("A0"))
            #expect(object.version == 2)
        }
        try await server.stop()
    }

    @Test("A delete based on a stale version conflicts; a uniqueness clash is ALREADY_EXISTS or an upsert")
    func deleteAndUniqueness() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        defer { Task { await client.close() } }
        let uuid = UUID()
        let saved = try await client.save(Wire.save(inserts: [Wire.insertBook("book", title: "One", uuid: uuid)]))
        let id = try #require(saved.inserted.first?.id)
        _ = try await client.save(Wire.save(updates: [Wire.update(id, baseVersion: 1, ["pages": .integer(7)])]))
        let stale = await #expect(throws: StrataClientError.self) {
            try await client.save(Wire.save(deletes: [Strata_V1_DeletedObject.with { $0.id = id; $0.baseVersion = 1 }]))
        }
        #expect(stale?.strataCode == 133020)
        #expect(try await client.count("Book") == 1)

        let duplicate = await #expect(throws: StrataClientError.self) {
            try await client.save(Wire.save(inserts: [Wire.insertBook("again", title: "Two", uuid: uuid)]))
        }
        #expect(duplicate?.code == .alreadyExists)
        #expect(duplicate?.strataCode == 133021)
        #expect(try await client.count("Book") == 1)

        _ = try await client.save(Wire.save(inserts: [Wire.insertBook("upsert", title: "Two", uuid: uuid)], policy: .mergeByPropertyObjectTrump))
        #expect(try await client.count("Book") == 1)
        let object = try #require(try await client.refresh([id]).objects.first)
        #expect(try object.value("title") == .string("Two"))
        try await server.stop()
    }
}
