import Foundation
import StrataAuth
import StrataClient
import StrataContext
import StrataModel
import StrataSQLite
import StrataSamples
@testable import StrataServer
import StrataTestCertificates
import StrataWire
import Testing

/// Access rules through real sockets: three identities against every
/// operation, entities with and without rules, plain and over TLS.
@Suite("Access rules")
struct AccessRulesTests {
    static let rulesJSON = """
    {
      "Book": {
        "read": "author == $AUTH.subject OR 'editor' IN $AUTH.roles",
        "create": "author == $AUTH.subject",
        "update": "author == $AUTH.subject",
        "delete": "'editor' IN $AUTH.roles"
      },
      "Feedback": {"read": "TRUEPREDICATE", "create": "TRUEPREDICATE"}
    }
    """

    static func rules() throws -> AccessRules {
        try AccessRules(json: Data(rulesJSON.utf8), file: "rules.json", model: BooksSample.model)
    }

    /// admin (the admin token), alice (editor), bob (no role).
    static func authenticator() -> Authenticator {
        Authenticator(.init(adminToken: "root", authFile: AuthFile(tokens: [
            .init(digest: TokenDigest.bytes(of: "alice-token"), identity: Identity(subject: "alice", roles: ["editor"])),
            .init(digest: TokenDigest.bytes(of: "bob-token"), identity: Identity(subject: "bob")),
        ])))
    }

    @Test("Rules load, inherit and type-check; every problem is reported at once")
    func loading() throws {
        let rules = try Self.rules()
        #expect(rules.rule(.read, for: "Book").text == "author == $AUTH.subject OR 'editor' IN $AUTH.roles")
        #expect(rules.rule(.delete, for: "Feedback").isAdminOnly)
        #expect(rules.rule(.update, for: "Feedback").isAdminOnly)
        let bad = """
        {"Book": {"read": "pages == 'many'", "write": "TRUEPREDICATE", "create": "title ==", "update": "$AUTH.password == 'x'", "delete": 3},
         "Shelf": {"read": "TRUEPREDICATE"}}
        """
        #expect {
            try AccessRules(json: Data(bad.utf8), file: "rules.json", model: BooksSample.model)
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("rules.json: ")
                && text.contains("Book.read: error 140101: line 1, column 1: cannot compare") && text.contains("Book.write: not an operation")
                && text.contains("Book.create: line 1, column 9") && text.contains("Book.update: error 140101: $AUTH.password")
                && text.contains("Book.delete: a rule is null or a predicate string")
                && text.contains("Shelf: the model has no such entity")
        }
    }

    @Test("Three identities against every operation, plain and over TLS", arguments: [false, true])
    func matrix(overTLS: Bool) async throws {
        let certificates = overTLS ? try TestCertificates() : nil
        defer { certificates?.remove() }
        let server = try await TestServer.start {
            $0.authenticator = Self.authenticator()
            $0.accessControl = AccessControl(try! Self.rules())
            if let certificates {
                $0.tls = try? ServerTLS(files: .init(certificateChain: certificates.serverCertificateFile, privateKey: certificates.serverKeyFile))
            }
        }
        func client(_ token: String) -> StrataClient {
            server.client(token) {
                $0.authToken = token
                if let certificates { $0.tls = ClientTLS(trustedCA: certificates.caFile) }
            }
        }
        let admin = client("root"), alice = client("alice-token"), bob = client("bob-token")

        // Bob subscribes before anything happens.
        let bobBooks = try await bob.subscribe(entity: "Book")
        let bobAll = try await bob.subscribe()

        // The admin writes anything.
        let seeded = try await admin.save(Wire.save(inserts: [
            Wire.insertBook("a", title: "Alice's", author: "alice"),
            Wire.insertBook("b", title: "Bob's", author: "bob"),
            Wire.insertBook("n", title: "Nobody's", author: "x"),
        ]))
        let ids = Dictionary(uniqueKeysWithValues: seeded.inserted.map { ($0.temporaryID, $0.id) })
        let (aliceBook, bobBook, nobodysBook) = (ids["a"]!, ids["b"]!, ids["n"]!)
        // Nobody's book has no author at all (nil never equals a subject).
        _ = try await admin.save(Wire.save(updates: [Wire.update(nobodysBook, baseVersion: 1, ["author": .null])]))

        // Bob's subscription announced only his own book.
        let first = try #require(await next(bobBooks))
        #expect(first.inserted.map(\.id) == [bobBook])

        // Reads: fetch, count, IDs, the one-store route, sorting and limits.
        #expect(try await bob.fetch(Wire.fetch("Book")).objects.map(\.id) == [bobBook])
        #expect(try await bob.count("Book") == 1)
        #expect(try await bob.count("Book", predicate: "title BEGINSWITH 'A'") == 0)
        #expect(try await alice.count("Book") == 3)
        #expect(try await admin.count("Book") == 3)
        var limited = Wire.fetch("Book", sort: ["title"])
        limited.limit = 1
        #expect(try await alice.fetch(limited).objects.map(\.id) == [aliceBook])
        #expect(try await bob.fetch(limited).objects.map(\.id) == [bobBook])
        var oneStore = Wire.fetch("Book", resultType: .objectIds)
        oneStore.storeID = String(bobBook.split(separator: "/")[1])
        #expect(try await bob.fetch(oneStore).objectIDs == [bobBook])
        #expect(try await bob.count("Feedback") == 0)

        // Refresh and get: another's object is answered as missing, in both routes, cache warm or not.
        for skipFetched in [false, true, true] {
            let refreshed = try await bob.refresh([aliceBook, bobBook, nobodysBook], skipFetched: skipFetched)
            #expect(refreshed.objects.map(\.id) == [bobBook])
            #expect(refreshed.missing == [aliceBook, nobodysBook])
        }
        #expect(try await alice.refresh([aliceBook, bobBook], skipFetched: true).objects.count == 2)

        // Creates: only as himself; nothing of a refused save is written.
        _ = try await bob.save(Wire.save(inserts: [Wire.insertBook("b2", title: "Bob's second", author: "bob")]))
        for author in ["alice", ""] {
            var insert = Wire.insertBook("x", title: "Forged", author: author)
            if author.isEmpty { insert.values["author"] = nil }
            let denied = await #expect(throws: StrataClientError.self) {
                _ = try await bob.save(Wire.save(inserts: [Wire.insertBook("ok", title: "Fine", author: "bob"), insert]))
            }
            #expect(denied?.code == .permissionDenied)
            #expect(denied?.strataCode == 140201)
            #expect(denied?.message.contains("Book.create") == true)
        }
        #expect(try await admin.count("Book") == 4)

        // Updates: his own, not so that it leaves his sight, not another's.
        let bobVersion = try #require(try await bob.refresh([bobBook], skipFetched: true).objects.first?.version)
        let renamed = try await bob.save(Wire.save(updates: [Wire.update(bobBook, baseVersion: bobVersion, ["title": .string("Bob's, renamed")])]))
        let version = renamed.versions[bobBook] ?? 0
        let away = await #expect(throws: StrataClientError.self) {
            _ = try await bob.save(Wire.save(updates: [Wire.update(bobBook, baseVersion: version, ["author": .string("alice")])]))
        }
        #expect(away?.code == .permissionDenied)
        #expect(away?.message.contains("no longer satisfy rule Book.update") == true)
        // Another's object is answered exactly as one that does not exist.
        let other = await #expect(throws: StrataClientError.self) {
            _ = try await bob.save(Wire.save(updates: [Wire.update(aliceBook, baseVersion: 0, ["title": .string("Mine now")])]))
        }
        let missingID = aliceBook.replacingOccurrences(of: "/p1", with: "/p999")
        let missing = await #expect(throws: StrataClientError.self) {
            _ = try await bob.save(Wire.save(updates: [Wire.update(missingID, baseVersion: 0, ["title": .string("Mine now")])]))
        }
        #expect(other?.code == .notFound)
        #expect(other?.strataCode == missing?.strataCode)
        #expect(other?.message == missing?.message.replacingOccurrences(of: missingID, with: aliceBook))
        let hiddenDelete = await #expect(throws: StrataClientError.self) {
            _ = try await bob.save(Wire.save(deletes: [Strata_V1_DeletedObject.with { $0.id = aliceBook }]))
        }
        #expect(hiddenDelete?.code == .notFound)
        // A stale version on another's object: refused, not a conflict showing its values.
        let stale = await #expect(throws: StrataClientError.self) {
            _ = try await bob.save(Wire.save(updates: [Wire.update(aliceBook, baseVersion: 7, ["title": .string("Mine now")])]))
        }
        #expect(stale?.code == .notFound)
        #expect(stale?.conflicts.isEmpty == true)
        #expect(stale.map { "\($0)" }?.contains("Alice's") == false)
        #expect(try await admin.refresh([aliceBook], skipFetched: true).objects.first?.values["title"]?.string == "Alice's")

        // A uniqueness clash with a hidden object does not name it.
        let uuid = UUID()
        _ = try await admin.save(Wire.save(inserts: [Wire.insertBook("u", title: "Holder", uuid: uuid, author: "alice")]))
        let clash = await #expect(throws: StrataClientError.self) {
            _ = try await bob.save(Wire.save(inserts: [Wire.insertBook("c", title: "Clash", uuid: uuid, author: "bob")]))
        }
        #expect(clash?.strataCode == 133021)
        #expect(clash?.details.first?.contains("already used by an object the caller may not read") == true, "\(String(describing: clash?.details))")
        #expect(clash?.details.joined().contains("strata://") == false)
        // Nor does a merge policy turn the insert into an update of it.
        for policy in [Strata_V1_MergePolicy.mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback] {
            let upsert = await #expect(throws: StrataClientError.self, "\(policy)") {
                _ = try await bob.save(Wire.save(inserts: [Wire.insertBook("c", title: "Clash", uuid: uuid, author: "bob")], policy: policy))
            }
            #expect(upsert?.strataCode == 133021, "\(policy)")
        }
        #expect(try await admin.fetch(Wire.fetch("Book", "title == 'Holder'")).objects.first?.values["author"]?.string == "alice")

        // Deletes: editors only.
        let delete = Strata_V1_DeletedObject.with { $0.id = nobodysBook }
        let bobDelete = await #expect(throws: StrataClientError.self) { _ = try await bob.save(Wire.save(deletes: [Strata_V1_DeletedObject.with { $0.id = bobBook }])) }
        #expect(bobDelete?.code == .permissionDenied)
        _ = try await alice.save(Wire.save(deletes: [delete]))

        // Feedback: anyone creates; only the admin changes or deletes.
        let feedback = try await bob.save(Wire.save(inserts: [Wire.insertFeedback("f", bookUUID: UUID(), rating: 5)]))
        let feedbackID = try #require(feedback.inserted.first?.id)
        let feedbackUpdate = await #expect(throws: StrataClientError.self) {
            _ = try await bob.save(Wire.save(updates: [Wire.update(feedbackID, baseVersion: 1, ["rating": .integer(1)])]))
        }
        #expect(feedbackUpdate?.message.contains("Feedback.update is null (admin only)") == true)

        // History: the admin's only while rules are in force.
        let history = await #expect(throws: StrataClientError.self) { _ = try await bob.history(store: "Book") }
        #expect(history?.code == .permissionDenied)
        #expect(try await admin.history(store: "Book").transactions.isEmpty == false)
        // So is a backup (a copy holds every object).
        let copy = server.directory.appendingPathComponent("bob.backup")
        let backup = await #expect(throws: StrataClientError.self) { _ = try await bob.backup(store: "Book", to: copy) }
        #expect(backup?.code == .permissionDenied)
        #expect(!FileManager.default.fileExists(atPath: copy.path) && !FileManager.default.fileExists(atPath: copy.path + ".partial"))
        #expect(try await admin.backup(store: "Book", to: copy).byteCount > 0)

        // Subscriptions: another's book never reaches Bob; his book leaving
        // his sight is a deletion; a deletion he could not see is not told.
        let hidden = try await admin.save(Wire.save(inserts: [Wire.insertBook("h", title: "Hidden", author: "alice")]))
        _ = hidden
        let given = try await admin.save(Wire.save(updates: [Wire.update(bobBook, baseVersion: version, ["author": .string("alice")])]))
        _ = given
        _ = try await admin.save(Wire.save(deletes: [Strata_V1_DeletedObject.with { $0.id = aliceBook }]))
        var seen: [Strata_V1_ChangeNotification] = []
        while let note = await next(bobBooks, within: .seconds(1)) { seen.append(note) }
        let insertedSeen = seen.flatMap(\.inserted).map(\.id)
        let updatedSeen = seen.flatMap(\.updated).map(\.id)
        let deletedSeen = seen.flatMap(\.deleted).map(\.id)
        #expect(!insertedSeen.contains { $0 == aliceBook || $0 == ids["h"] ?? "" })
        #expect(!updatedSeen.contains(aliceBook))
        #expect(deletedSeen.contains(bobBook), "the book that left Bob's sight is announced as deleted")
        #expect(!deletedSeen.contains(aliceBook), "Alice's book was never Bob's to see")
        #expect(!deletedSeen.contains(nobodysBook))
        // The subscription to every entity filters per entity the same way.
        var everything: [Strata_V1_ChangeNotification] = []
        while let note = await next(bobAll, within: .milliseconds(300)) { everything.append(note) }
        let allIDs = everything.flatMap { $0.inserted.map(\.id) + $0.updated.map(\.id) }
        #expect(!allIDs.contains(aliceBook))
        #expect(everything.flatMap(\.inserted).contains { $0.id == feedbackID })

        for c in [admin, alice, bob] { await c.close() }
        try await server.stop()
    }

    @Test("Rules without a way to authenticate are refused")
    func needsAuthentication() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-rules-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try await PersistentContainer(
            model: BooksSample.model,
            storeDescriptions: BooksSample.sqliteStores(in: directory), factory: .standard,
            transformers: BooksSample.transformers,
            transientRules: BooksSample.transientRules
        )
        let server = StrataServer(coordinator: container.coordinator, configuration: ServerConfiguration(port: 0, accessControl: AccessControl(try Self.rules())))
        await #expect(throws: StrataServerError.self) { _ = try await server.listen() }
        try await container.close()
    }
}

@Suite("Subscription limit")
struct SubscriptionLimitTests {
    @Test("A connection holds at most the configured number of subscriptions")
    func limit() async throws {
        let server = try await TestServer.start { $0.maxSubscriptionsPerConnection = 3 }
        let client = server.client()
        var streams: [AsyncStream<Strata_V1_ChangeNotification>] = []
        for _ in 0..<3 { streams.append(try await client.subscribe(entity: "Book")) }
        let refused = await #expect(throws: StrataClientError.self) { _ = try await client.subscribe(entity: "Book") }
        #expect(refused?.code == .resourceExhausted)
        _ = try await client.ping()
        #expect(streams.count == 3)
        await client.close()
        try await server.stop()
    }
}

@Suite("Access rules across relationships")
struct AccessRulesRelationshipTests {
    /// Authors (guarded by owner) and their books (open to all).
    static let model = ObjectModel(name: "Shelf", entities: [
        EntityDescription(name: "Writer", attributes: [
            AttributeDescription(name: "name", type: .string, isOptional: true),
            AttributeDescription(name: "owner", type: .string, isOptional: true),
        ], relationships: [
            RelationshipDescription(name: "works", destination: "Work", inverse: "writer", toMany: true),
        ]),
        EntityDescription(name: "Work", attributes: [
            AttributeDescription(name: "title", type: .string, isOptional: true),
            AttributeDescription(name: "pages", type: .integer32, isOptional: true),
        ], relationships: [
            RelationshipDescription(name: "writer", destination: "Writer", inverse: "works"),
        ]),
    ])

    static let rules = """
    {"Writer": {"read": "owner == $AUTH.subject", "create": "TRUEPREDICATE", "update": "owner == $AUTH.subject"},
     "Work": {"read": "title != 'Secret'", "create": "TRUEPREDICATE", "update": "TRUEPREDICATE"}}
    """

    @Test("Key paths, ANY, ALL, SUBQUERY and @count see only related objects the caller may read; references to others are left out")
    func relationships() async throws {
        let server = try await TestServer.start(model: Self.model) {
            $0.authenticator = Authenticator(.init(adminToken: "root", authFile: AuthFile(tokens: [
                .init(digest: TokenDigest.bytes(of: "bob-token"), identity: Identity(subject: "bob")),
            ])))
            $0.accessControl = AccessControl(try! AccessRules(json: Data(Self.rules.utf8), file: "rules.json", model: Self.model))
        }
        let admin = server.client("admin") { $0.authToken = "root" }
        let bob = server.client("bob") { $0.authToken = "bob-token" }
        func insert(_ id: String, _ entity: String, _ values: [String: Strata_V1_Value]) -> Strata_V1_InsertedObject {
            Strata_V1_InsertedObject.with { $0.temporaryID = id; $0.entity = entity; $0.values = values }
        }
        let saved = try await admin.save(Wire.save(inserts: [
            insert("alice", "Writer", ["name": PropertyValue.string("Alice").wire, "owner": PropertyValue.string("alice").wire]),
            insert("bob", "Writer", ["name": PropertyValue.string("Bob").wire, "owner": PropertyValue.string("bob").wire]),
            insert("w1", "Work", ["title": PropertyValue.string("Alice's work").wire, "writer": Strata_V1_Value.with { $0.object = "alice" }]),
            insert("w2", "Work", ["title": PropertyValue.string("Bob's work").wire, "pages": PropertyValue.integer(10).wire, "writer": Strata_V1_Value.with { $0.object = "bob" }]),
            insert("w3", "Work", ["title": PropertyValue.string("Secret").wire, "pages": PropertyValue.integer(5).wire, "writer": Strata_V1_Value.with { $0.object = "bob" }]),
        ]))
        let ids = Dictionary(uniqueKeysWithValues: saved.inserted.map { ($0.temporaryID, $0.id) })
        func selected(_ entity: String, _ predicate: String, _ client: StrataClient) async throws -> [String] {
            try await client.fetch(Wire.fetch(entity, predicate, resultType: .objectIds)).objectIDs
        }

        // Through a to-one: only when the writer may be read.
        #expect(try await selected("Work", "writer.name == 'Alice'", bob) == [])
        #expect(try await selected("Work", "writer.name == 'Alice'", admin) == [ids["w1"]])
        #expect(try await selected("Work", "writer.name == 'Bob'", bob) == [ids["w2"]])
        // Through a to-many: only readable works count.
        #expect(try await selected("Writer", "ANY works.title == 'Secret'", bob) == [])
        #expect(try await selected("Writer", "ANY works.title == 'Secret'", admin) == [ids["bob"]])
        #expect(try await selected("Writer", "works.@count == 1", bob) == [ids["bob"]])
        #expect(try await selected("Writer", "SUBQUERY(works, $w, $w.pages > 0).@count == 1", bob) == [ids["bob"]])
        #expect(try await selected("Writer", "ALL works.title BEGINSWITH 'Bob'", bob) == [ids["bob"]])
        #expect(try await selected("Writer", "ALL works.title BEGINSWITH 'Bob'", admin).contains(ids["bob"]!) == false)
        #expect(try await selected("Work", "ANY writer.works.title == 'Secret'", bob) == [])
        // What cannot leave hidden objects out is refused.
        let sum = await #expect(throws: StrataClientError.self) { _ = try await bob.fetch(Wire.fetch("Writer", "works.@sum.pages > 0")) }
        #expect(sum?.code == .permissionDenied)
        let sorted = await #expect(throws: StrataClientError.self) { _ = try await bob.fetch(Wire.fetch("Work", sort: ["writer.name"])) }
        #expect(sorted?.code == .permissionDenied)
        // A reference to a hidden writer compares as neither nil nor that writer.
        #expect(try await bob.count("Work", predicate: "writer != nil") == 1)
        var probe = Wire.fetch("Work", "writer == $W", resultType: .count)
        probe.variables["W"] = Strata_V1_VariableValue.with { $0.value = Strata_V1_Value.with { $0.object = ids["alice"]! } }
        #expect(try await bob.fetch(probe).count == 0)
        #expect(try await admin.fetch(probe).count == 1)

        // The reference to Alice (hidden) is left out of answers.
        let works = try await bob.fetch(Wire.fetch("Work", sort: ["title"])).objects
        #expect(works.map(\.id) == [ids["w1"], ids["w2"]])
        #expect(works[0].values["writer"] == nil)
        #expect(works[1].values["writer"]?.object == ids["bob"])
        let refreshed = try await bob.refresh([ids["w1"]!], skipFetched: true)
        #expect(refreshed.objects.first?.values["writer"] == nil)
        // The admin sees both references.
        #expect(try await admin.fetch(Wire.fetch("Work", sort: ["title"])).objects[0].values["writer"]?.object == ids["alice"])
        #expect(try await bob.fetch(Wire.fetch("Writer")).objects.map(\.id) == [ids["bob"]])
        for c in [admin, bob] { await c.close() }
        try await server.stop()
    }
}

extension AccessRulesRelationshipTests {
    /// The model with `Writer.works` deleting by `rule`.
    static func model(worksDeleteRule rule: DeleteRule) -> ObjectModel {
        ObjectModel(name: "Shelf", entities: model.entities.map { entity in
            guard entity.name == "Writer" else { return entity }
            var writer = entity
            writer.relationships = [RelationshipDescription(name: "works", destination: "Work", inverse: "writer", toMany: true, deleteRule: rule)]
            return writer
        })
    }

    @Test("A delete's cascades and nullified relationships are checked against their own rules", arguments: [DeleteRule.nullify, .cascade])
    func deleteRules(_ deleteRule: DeleteRule) async throws {
        let model = Self.model(worksDeleteRule: deleteRule)
        let rules = """
        {"Writer": {"read": "TRUEPREDICATE", "create": "TRUEPREDICATE", "delete": "owner == $AUTH.subject"},
         "Work": {"read": "TRUEPREDICATE", "create": "TRUEPREDICATE", "update": "title != 'Locked'", "delete": "title != 'Locked'"}}
        """
        let server = try await TestServer.start(model: model) {
            $0.authenticator = Authenticator(.init(adminToken: "root", authFile: AuthFile(tokens: [
                .init(digest: TokenDigest.bytes(of: "bob-token"), identity: Identity(subject: "bob")),
            ])))
            $0.accessControl = AccessControl(try! AccessRules(json: Data(rules.utf8), file: "rules.json", model: model))
        }
        let bob = server.client("bob") { $0.authToken = "bob-token" }
        func insert(_ id: String, _ entity: String, _ values: [String: Strata_V1_Value]) -> Strata_V1_InsertedObject {
            Strata_V1_InsertedObject.with { $0.temporaryID = id; $0.entity = entity; $0.values = values }
        }
        let saved = try await bob.save(Wire.save(inserts: [
            insert("me", "Writer", ["name": PropertyValue.string("Bob").wire, "owner": PropertyValue.string("bob").wire]),
            insert("free", "Work", ["title": PropertyValue.string("Free").wire, "writer": Strata_V1_Value.with { $0.object = "me" }]),
            insert("locked", "Work", ["title": PropertyValue.string("Locked").wire, "writer": Strata_V1_Value.with { $0.object = "me" }]),
        ]))
        let ids = Dictionary(uniqueKeysWithValues: saved.inserted.map { ($0.temporaryID, $0.id) })
        let refused = await #expect(throws: StrataClientError.self) {
            _ = try await bob.save(Wire.save(deletes: [Strata_V1_DeletedObject.with { $0.id = ids["me"]! }]))
        }
        #expect(refused?.code == .permissionDenied)
        #expect(refused?.message.contains(deleteRule == .cascade ? "Work.delete" : "Work.update") == true, "\(String(describing: refused))")
        // Nothing of it was written: the writer and both works are there, linked.
        let works = try await bob.fetch(Wire.fetch("Work", sort: ["title"])).objects
        #expect(works.count == 2)
        #expect(works.allSatisfy { $0.values["writer"]?.object == ids["me"] })
        #expect(try await bob.count("Writer") == 1)
        await bob.close()
        try await server.stop()
    }
}

@Suite("Access rules: identities without roles or claims")
struct AccessRulesIdentityTests {
    /// Books by author, written straight into the server's stores.
    static func seed(_ server: TestServer, authors: [String?]) async throws {
        let context = Context(coordinator: server.container.coordinator)
        try await context.perform { context in
            for (index, author) in authors.enumerated() {
                let book = try context.insert("Book")
                try book.setValue(.uuid(UUID()), forKey: "uuid")
                try book.setValue(.string("Book \(index)"), forKey: "title")
                try book.setValue(author.map { .string($0) } ?? .null, forKey: "author")
            }
            try await context.save()
        }
    }

    @Test("Client certificates alone prove a subject, not the admin role: the rules bind them")
    func certificatesAreNotAdmin() async throws {
        let certificates = try TestCertificates()
        defer { certificates.remove() }
        let alice = try certificates.client("alice")
        let rules = #"{"Book": {"read": "author == $AUTH.subject"}, "Feedback": {"read": "TRUEPREDICATE"}}"#
        let server = try await TestServer.start {
            $0.tls = try? ServerTLS(files: .init(certificateChain: certificates.serverCertificateFile, privateKey: certificates.serverKeyFile, clientCA: certificates.caFile))
            $0.accessControl = AccessControl(try! AccessRules(json: Data(rules.utf8), file: "rules.json", model: BooksSample.model))
        }
        try await Self.seed(server, authors: ["alice", "bob", nil])
        let client = server.client("alice") {
            $0.tls = ClientTLS(trustedCA: certificates.caFile, certificateChain: alice.certificate, privateKey: alice.key)
        }
        #expect(try await client.count("Book") == 1)
        let history = await #expect(throws: StrataClientError.self) { _ = try await client.history(store: "Book") }
        #expect(history?.code == .permissionDenied)
        await client.close()
        try await server.stop()
    }

    @Test("A rule that reads a claim the caller lacks admits nothing, not the rows where it is nil")
    func missingClaims() async throws {
        let rules = #"{"Book": {"read": "author == $AUTH.claims.pen"}, "Feedback": {"read": "TRUEPREDICATE"}}"#
        let server = try await TestServer.start {
            $0.authenticator = Authenticator(.init(authFile: AuthFile(tokens: [
                .init(digest: TokenDigest.bytes(of: "carol"), identity: Identity(subject: "carol", claims: ["pen": "C. Writer"])),
                .init(digest: TokenDigest.bytes(of: "dave"), identity: Identity(subject: "dave")),
            ])))
            $0.accessControl = AccessControl(try! AccessRules(json: Data(rules.utf8), file: "rules.json", model: BooksSample.model))
        }
        try await Self.seed(server, authors: ["C. Writer", nil, nil, "Other"])
        let carol = server.client("carol") { $0.authToken = "carol" }
        let dave = server.client("dave") { $0.authToken = "dave" }
        #expect(try await carol.count("Book") == 1)
        #expect(try await dave.count("Book") == 0)
        for c in [carol, dave] { await c.close() }
        try await server.stop()
    }
}

extension AccessRulesRelationshipTests {
    @Test("A derived attribute may not read objects of an entity whose read rule limits who sees them")
    func derivedAttributes() throws {
        let model = ObjectModel(name: "Shelf", entities: Self.model.entities.map { entity in
            guard entity.name == "Writer" else { return entity }
            var writer = entity
            writer.attributes.append(AttributeDescription(name: "workCount", type: .integer64, isOptional: true, isDerived: true, derivationExpression: "works.@count"))
            return writer
        })
        let guarded = #"{"Writer": {"read": "TRUEPREDICATE"}, "Work": {"read": "title != 'Secret'"}}"#
        #expect {
            try AccessRules(json: Data(guarded.utf8), file: "rules.json", model: model)
        } throws: { error in
            "\(error)".contains("Writer.workCount: a derived attribute that reads Work objects")
        }
        let open = #"{"Writer": {"read": "TRUEPREDICATE"}, "Work": {"read": "TRUEPREDICATE"}}"#
        _ = try AccessRules(json: Data(open.utf8), file: "rules.json", model: model)
    }
}
