import Foundation
import GRDB
import StrataModel
import StrataQuery
import Testing
@testable import StrataStore

@Suite struct SQLiteStoreTests {
    typealias Models = SQLiteTestModels

    private func open(_ directory: SQLiteTestDirectory, model: ObjectModel = Models.library(), readOnly: Bool = false, migrates: Bool = true) async throws -> SQLiteStore {
        try await SQLiteStore(
            description: StoreDescription(url: directory.storeURL, type: .sqlite, isReadOnly: readOnly, migratesAutomatically: migrates, busyTimeout: .seconds(2)),
            model: model
        )
    }

    private func expectError(_ code: StrataError.Code, _ body: () async throws -> Void) async -> StrataError? {
        do {
            try await body()
            Issue.record("expected error \(code.rawValue)")
            return nil
        } catch let error as StrataError {
            #expect(error.code == code, "\(error)")
            return error
        } catch {
            Issue.record("expected a StrataError \(code.rawValue), got \(error)")
            return nil
        }
    }

    // MARK: - Values

    @Test func everyAttributeTypeRoundTrips() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)

        let tenth = try #require(Decimal(string: "0.1"))
        let fifth = try #require(Decimal(string: "0.2"))
        let big = try #require(Decimal(string: "12345678901234567890123456789012345678"))
        let negativeBig = try #require(Decimal(string: "-0.00000000000000000000000000000000000123"))
        var megabytes = Data(count: 5 * 1024 * 1024)
        for i in stride(from: 0, to: megabytes.count, by: 4093) { megabytes[i] = UInt8(truncatingIfNeeded: i &* 31) }
        let uuid = UUID()
        let when = Date(timeIntervalSinceReferenceDate: 789_012_345.123456)
        let unicode = "naïve café — 日本語 🎉 e\u{301} \u{0} end"

        let maxima: [String: PropertyValue] = [
            "i16": .integer(Int64(Int16.max)), "i32": .integer(Int64(Int32.max)), "i64": .integer(Int64.max),
            "dec": .decimal(tenth + fifth), "dbl": .double(Double.greatestFiniteMagnitude), "flt": .double(0.1),
            "str": .string(unicode), "flag": .boolean(true), "when": .date(when), "blob": .binary(megabytes),
            "uid": .uuid(uuid), "link": .uri("https://example.com/a%20b?x=1&y=ü#frag"), "opaque": .binary(Data([0, 1, 2, 255])),
            "scratch": .string("transient: ignored"),
        ]
        let minima: [String: PropertyValue] = [
            "i16": .integer(Int64(Int16.min)), "i32": .integer(Int64(Int32.min)), "i64": .integer(Int64.min),
            "dec": .decimal(big), "dbl": .double(-.infinity), "flt": .double(-3.4028234663852886e38),
            "str": .string(""), "flag": .boolean(false), "when": .date(Date(timeIntervalSince1970: -1_000_000_000.000001)),
            "blob": .binary(Data()), "uid": .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))), "link": .uri(""),
        ]
        let small: [String: PropertyValue] = ["dec": .decimal(negativeBig), "i64": .integer(0)]

        for values in [maxima, minima, small, [:]] {
            _ = try await store.insert("Item", values)
        }

        func check(_ store: SQLiteStore) async throws {
            let items = try await store.fetch("Item")
            try #require(items.count == 4)
            let stored = items[0]
            #expect(stored.version == 1)
            #expect(stored["i16"] == .integer(32767))
            #expect(stored["i32"] == .integer(2_147_483_647))
            #expect(stored["i64"] == .integer(.max))
            #expect(stored["dec"] == .decimal(try #require(Decimal(string: "0.3"))))
            #expect(stored["dbl"] == .double(.greatestFiniteMagnitude))
            #expect(stored["flt"] == .double(Double(Float(0.1))))
            #expect(stored["str"] == .string(unicode))
            #expect(stored["flag"] == .boolean(true))
            #expect(stored["when"] == .date(when))
            #expect(stored["blob"] == .binary(megabytes))
            #expect(stored["uid"] == .uuid(uuid))
            #expect(stored["link"] == .uri("https://example.com/a%20b?x=1&y=ü#frag"))
            #expect(stored["opaque"] == .binary(Data([0, 1, 2, 255])))
            #expect(stored.values["scratch"] == nil)

            let low = items[1]
            for (key, value) in minima where key != "flt" {
                #expect(low[key] == value, "\(key)")
            }
            #expect(low["flt"] == .double(Double(Float(-3.4028234663852886e38))))
            #expect(items[2]["dec"] == .decimal(negativeBig))
            #expect(items[2]["i64"] == .integer(0))
            // Every persisted attribute is present, nil ones as .null.
            #expect(items[3].values.count == 13)
            #expect(items[3].values.values.allSatisfy { $0.isNull })
        }
        try await check(store)
        try await store.close()
        try await check(try await open(directory))
    }

    @Test func integersOutOfRangeAndWrongKindsAreRefusedBeforeWriting() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)

        let error = await expectError(.invalidValue) {
            _ = try await store.save(StoreChanges(inserts: [
                .init(temporaryID: .temporary(entityName: "Item"), values: ["i16": .integer(1)]),
                .init(temporaryID: .temporary(entityName: "Item"), values: ["i16": .integer(70000)]),
            ]))
        }
        #expect(error?.message == "Item.i16: 70000 does not fit Integer 16")
        _ = await expectError(.invalidValue) {
            _ = try await store.insert("Item", ["i32": .integer(Int64(Int32.max) + 1)])
        }
        _ = await expectError(.invalidValue) {
            _ = try await store.insert("Item", ["i32": .string("12")])
        }
        _ = await expectError(.invalidValue) {
            _ = try await store.insert("Item", ["dbl": .double(.nan)])
        }
        _ = await expectError(.invalidValue) {
            _ = try await store.insert("Item", ["nope": .integer(1)])
        }
        #expect(try await store.count(store.resolved("Item")) == 0)

        // Subentities are named in messages by their own entity.
        let novelError = await expectError(.invalidValue) {
            _ = try await store.insert("Novel", ["pages": .integer(-40000)])
        }
        #expect(novelError?.message == "Novel.pages: -40000 does not fit Integer 16")
    }

    // MARK: - Relationships

    @Test func relationshipsOfEveryStorageRoundTrip() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)

        let author = ObjectID.temporary(entityName: "Author")
        let shelf = ObjectID.temporary(entityName: "Shelf")
        let books = (0..<4).map { _ in ObjectID.temporary(entityName: "Book") }
        let novel = ObjectID.temporary(entityName: "Novel")
        let red = ObjectID.temporary(entityName: "Tag")
        let blue = ObjectID.temporary(entityName: "Tag")
        let review = ObjectID.temporary(entityName: "Review")
        let shelfOrder = [books[2], novel, books[0], books[3], books[1]]

        var inserts: [StoreChanges.Insert] = [
            .init(temporaryID: review, values: ["stars": .integer(5), "book": .object(novel)]),
            .init(temporaryID: author, values: ["name": .string("Ursula")], toMany: ["books": books + [novel]]),
            .init(temporaryID: shelf, values: ["label": .string("SF")], toMany: ["books": shelfOrder]),
            .init(temporaryID: red, values: ["name": .string("red")], toMany: ["books": [books[0], novel]]),
            .init(temporaryID: blue, values: ["name": .string("blue")], toMany: ["books": [books[0]]]),
        ]
        for (i, book) in books.enumerated() {
            var toMany: [String: [ObjectID]] = [:]
            if i == 0 { toMany = ["tags": [red, blue], "related": [books[3], novel, books[1]]] }
            inserts.append(.init(temporaryID: book, values: ["title": .string("Book \(i)"), "author": .object(author), "shelf": .object(shelf)], toMany: toMany))
        }
        inserts.append(.init(temporaryID: novel, values: ["title": .string("Novel"), "genre": .string("SF"), "author": .object(author), "shelf": .object(shelf)], toMany: ["tags": [red]]))

        let commit = try await store.commit(StoreChanges(inserts: inserts))
        #expect(commit.permanentIDs.count == inserts.count)
        let id = { (temporary: ObjectID) throws -> ObjectID in try #require(commit.permanentIDs[temporary]) }
        for (temporary, permanent) in commit.permanentIDs {
            #expect(permanent.entityName == temporary.entityName)
            #expect(permanent.storeIdentifier == store.identifier)
            #expect(commit.versions[permanent] == 1)
            #expect(permanent.uriRepresentation == "strata://\(store.identifier)/\(temporary.entityName)/p\(permanent.primaryKey ?? -1)")
        }

        // To-one, including one whose destination is a subentity.
        let novels = try await store.fetch("Novel")
        #expect(novels.map(\.objectID) == [try id(novel)])
        let reviews = try await store.fetch("Review")
        #expect(reviews.first?["book"] == .object(try id(novel)))
        let allBooks = try await store.fetch("Book", sort: [StrataQuery.SortDescriptor("title")])
        #expect(allBooks.count == 5)
        #expect(allBooks.allSatisfy { $0["author"] == .object((try? id(author)) ?? $0.objectID) })
        #expect(allBooks.last?.objectID.entityName == "Novel")

        // One-to-many with inverse: by primary key.
        let authored = try await store.destinations(of: "books", for: try id(author))
        #expect(authored == (try (books + [novel]).map(id)))
        // Ordered, through the inverse foreign key's order column.
        #expect(try await store.destinations(of: "shelf", for: try id(books[0])) == [try id(shelf)])
        #expect(try await store.destinations(of: "books", for: try id(shelf)) == (try shelfOrder.map(id)))
        // Many-to-many, both sides.
        #expect(try await store.destinations(of: "tags", for: try id(books[0])) == [try id(red), try id(blue)])
        #expect(try await store.destinations(of: "books", for: try id(red)) == [try id(books[0]), try id(novel)])
        #expect(try await store.destinations(of: "tags", for: try id(novel)) == [try id(red)])
        // Ordered to-many without inverse.
        #expect(try await store.destinations(of: "related", for: try id(books[0])) == [try id(books[3]), try id(novel), try id(books[1])])
        #expect(try await store.destinations(of: "related", for: try id(books[1])) == [])

        // Reorder the shelf, move a book to a new shelf, retag.
        let newShelf = ObjectID.temporary(entityName: "Shelf")
        let reordered = [try id(books[1]), try id(books[0]), try id(novel), try id(books[2])]
        let moved = try id(books[3])
        let update = try await store.commit(StoreChanges(
            inserts: [.init(temporaryID: newShelf, values: ["label": .string("New")], toMany: ["books": [moved]])],
            updates: [
                .init(objectID: try id(shelf), expectedVersion: 1, values: [:], toMany: ["books": reordered]),
                .init(objectID: moved, expectedVersion: 1, values: ["shelf": .object(newShelf)]),
                .init(objectID: try id(books[0]), expectedVersion: 1, values: [:], toMany: ["tags": [try id(blue)], "related": [try id(books[1]), try id(books[3])]]),
                .init(objectID: try id(red), expectedVersion: 1, values: [:], toMany: ["books": [try id(novel)]]),
                .init(objectID: try id(blue), expectedVersion: 1, values: [:], toMany: ["books": [try id(books[0])]]),
            ]
        ))
        let newShelfID = try #require(update.permanentIDs[newShelf])
        #expect(update.versions[try id(shelf)] == 2)
        #expect(update.versions[moved] == 2)
        #expect(try await store.destinations(of: "books", for: try id(shelf)) == reordered)
        #expect(try await store.destinations(of: "books", for: newShelfID) == [moved])
        #expect(try await store.destinations(of: "tags", for: try id(books[0])) == [try id(blue)])
        #expect(try await store.destinations(of: "books", for: try id(red)) == [try id(novel)])
        #expect(try await store.destinations(of: "related", for: try id(books[0])) == [try id(books[1]), try id(books[3])])
        #expect(try await store.snapshots(for: [moved]).first?["shelf"] == .object(newShelfID))

        // Deleting a book removes its join-table rows on both sides.
        try await store.commit(StoreChanges(deletes: [.init(objectID: try id(books[0]), expectedVersion: 2)]))
        #expect(try await store.destinations(of: "books", for: try id(blue)) == [])
        #expect(try await store.snapshots(for: [try id(books[0])]) == [])
        #expect(try await store.destinations(of: "books", for: try id(shelf)) == [try id(books[1]), try id(novel), try id(books[2])])

        // Unknown relationship names are errors; unsaved objects have no destinations.
        _ = await expectError(.invalidValue) { _ = try await store.destinations(of: "nope", for: try id(shelf)) }
        #expect(try await store.destinations(of: "books", for: .temporary(entityName: "Shelf")) == [])
    }

    @Test func fetchesHonourPredicatesSortsWindowsAndSubentities() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        var inserts: [StoreChanges.Insert] = []
        for i in 0..<20 {
            inserts.append(.init(temporaryID: .temporary(entityName: i % 4 == 0 ? "Novel" : "Book"),
                                 values: ["title": .string("T\(String(format: "%02d", 19 - i))"), "pages": .integer(Int64(i * 10))]))
        }
        try await store.commit(StoreChanges(inserts: inserts))

        let big = try await store.fetch("Book", "pages >= 100", sort: [StrataQuery.SortDescriptor("title", ascending: false)], limit: 3, offset: 1)
        #expect(big.map { $0["pages"] } == [.integer(110), .integer(120), .integer(130)])
        #expect(try await store.count(store.resolved("Book", "pages >= 100")) == 10)
        #expect(try await store.count(store.resolved("Book", "pages >= 100", limit: 3, offset: 8)) == 2)
        #expect(try await store.count(store.resolved("Novel")) == 5)
        #expect(try await store.count(store.resolved("Book", subentities: false)) == 15)
        let ids = try await store.fetchObjectIDs(store.resolved("Book", "title BEGINSWITH[c] 't0'", sort: [StrataQuery.SortDescriptor("pages")]))
        #expect(ids.count == 10)
        let snapshots = try await store.fetch("Book", "title BEGINSWITH[c] 't0'", sort: [StrataQuery.SortDescriptor("pages")])
        #expect(ids == snapshots.map(\.objectID))
        #expect(ids.filter { $0.entityName == "Novel" }.count == 2)

        // snapshots(for:) keeps the asked order, drops unknown and duplicate IDs.
        let missing = ObjectID(storeIdentifier: store.identifier, entityName: "Book", key: .permanent(9999))
        let foreign = ObjectID(storeIdentifier: "other", entityName: "Book", key: .permanent(1))
        let asked = [ids[3], missing, ids[0], foreign, ids[3]]
        #expect(try await store.snapshots(for: asked).map(\.objectID) == [ids[3], ids[0]])
    }

    @Test func snapshotsForManyIDsAreChunked() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let count = SQLiteRowDecoder.chunkSize + 500
        let inserts = (0..<count).map { StoreChanges.Insert(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("t\($0)")]) }
        let commit = try await store.commit(StoreChanges(inserts: inserts))
        let ids = inserts.compactMap { commit.permanentIDs[$0.temporaryID] }.reversed()
        let snapshots = try await store.snapshots(for: Array(ids))
        #expect(snapshots.count == count)
        #expect(snapshots.map(\.objectID) == Array(ids))
        #expect(snapshots.first?["name"] == .string("t\(count - 1)"))
    }

    // MARK: - Versions and conflicts

    @Test func versionsGrowByOneAndStaleWritesConflictWithoutWriting() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let book = try await store.insert("Book", ["title": .string("v1")])
        let other = try await store.insert("Book", ["title": .string("other")])
        var commit = try await store.commit(StoreChanges(updates: [.init(objectID: book, expectedVersion: 1, values: ["title": .string("v2")])]))
        #expect(commit.versions[book] == 2)
        commit = try await store.commit(StoreChanges(updates: [.init(objectID: book, expectedVersion: 2, values: ["pages": .integer(3)])]))
        #expect(commit.versions[book] == 3)

        // A stale update: nothing of the save is written.
        let result = try await store.save(StoreChanges(
            inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("new")])],
            updates: [
                .init(objectID: other, expectedVersion: 1, values: ["title": .string("changed")]),
                .init(objectID: book, expectedVersion: 1, values: ["title": .string("stale")]),
            ]
        ))
        guard case .conflicts(let conflicts) = result else {
            Issue.record("expected conflicts, got \(result)")
            return
        }
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.objectID == book)
        #expect(conflicts.first?.expectedVersion == 1)
        #expect(conflicts.first?.currentVersion == 3)
        #expect(conflicts.first?.currentSnapshot?["title"] == .string("v2"))
        #expect(conflicts.first?.currentSnapshot?.version == 3)
        #expect(try await store.count(store.resolved("Book")) == 2)
        #expect(try await store.snapshots(for: [other]).first?["title"] == .string("other"))

        // Update and delete of a deleted row: current version 0, no snapshot.
        try await store.commit(StoreChanges(deletes: [.init(objectID: other, expectedVersion: 1)]))
        let gone = try await store.save(StoreChanges(
            updates: [.init(objectID: other, expectedVersion: 1, values: ["title": .string("ghost")]), .init(objectID: book, expectedVersion: 3, values: ["title": .string("v4")])],
            deletes: [.init(objectID: other, expectedVersion: 1)]
        ))
        guard case .conflicts(let ghost) = gone else {
            Issue.record("expected conflicts, got \(gone)")
            return
        }
        #expect(ghost.count == 2)
        #expect(ghost.allSatisfy { $0.objectID == other && $0.currentVersion == 0 && $0.currentSnapshot == nil })
        #expect(try await store.snapshots(for: [book]).first?["title"] == .string("v2"))

        // Without version checks (overwrite), the stale update wins.
        commit = try await store.commit(StoreChanges(updates: [.init(objectID: book, expectedVersion: 1, values: ["title": .string("forced")])], checksVersions: false))
        #expect(commit.versions[book] == 4)
    }

    @Test func uniquenessConstraintConflictsNameTheExistingObject() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let first = try await store.insert("Book", ["isbn": .string("978-0")])
        let duplicate = ObjectID.temporary(entityName: "Novel")
        let twinA = ObjectID.temporary(entityName: "Book")
        let twinB = ObjectID.temporary(entityName: "Book")
        let result = try await store.save(StoreChanges(inserts: [
            .init(temporaryID: .temporary(entityName: "Book"), values: ["isbn": .string("978-1")]),
            .init(temporaryID: duplicate, values: ["isbn": .string("978-0"), "title": .string("dup")]),
            .init(temporaryID: twinA, values: ["isbn": .string("978-2")]),
            .init(temporaryID: twinB, values: ["isbn": .string("978-2")]),
            .init(temporaryID: .temporary(entityName: "Book"), values: ["isbn": .null]),
            .init(temporaryID: .temporary(entityName: "Book"), values: ["isbn": .null]),
        ]))
        guard case .constraintConflicts(let conflicts) = result else {
            Issue.record("expected constraint conflicts, got \(result)")
            return
        }
        #expect(conflicts.count == 2)
        let clash = try #require(conflicts.first)
        #expect(clash.entityName == "Book")
        #expect(clash.constraint == ["isbn"])
        #expect(clash.values == ["isbn": .string("978-0")])
        #expect(clash.objectID == duplicate)
        #expect(clash.existingObjectID == first)
        // Between two inserts of the save: no saved object holds the values.
        #expect(conflicts.last?.objectID == twinB)
        #expect(conflicts.last?.existingObjectID == nil)
        #expect(conflicts.last?.values == ["isbn": .string("978-2")])
        #expect(try await store.count(store.resolved("Book")) == 1)

        // An update onto an existing value.
        let second = try await store.insert("Book", ["isbn": .string("978-9")])
        let update = try await store.save(StoreChanges(updates: [.init(objectID: second, expectedVersion: 1, values: ["isbn": .string("978-0")])]))
        guard case .constraintConflicts(let updateConflicts) = update else {
            Issue.record("expected constraint conflicts, got \(update)")
            return
        }
        #expect(updateConflicts.map(\.existingObjectID) == [first])
        #expect(try await store.snapshots(for: [second]).first?.version == 1)

        // Delete and re-insert the value in one save is fine.
        try await store.commit(StoreChanges(
            inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["isbn": .string("978-0")])],
            deletes: [.init(objectID: first, expectedVersion: 1)]
        ))
    }

    // MARK: - Files

    @Test func readOnlyStoresRefuseWritesAndNeverChangeTheFile() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let writer = try await open(directory)
        let book = try await writer.insert("Book", ["title": .string("Dune")])
        let identifier = writer.identifier
        try await writer.close()

        let before = try Data(contentsOf: directory.storeURL)
        let store = try await open(directory, readOnly: true)
        #expect(store.identifier == identifier)
        for _ in 0..<3 {
            #expect(try await store.fetch("Book", "title == 'Dune'").map(\.objectID) == [book])
            #expect(try await store.snapshots(for: [book]).count == 1)
        }
        let error = await expectError(.storeSave) {
            _ = try await store.save(StoreChanges(updates: [.init(objectID: book, expectedVersion: 1, values: ["title": .string("x")])]))
        }
        #expect(error?.message.contains("read-only") == true)
        #expect(error?.message.contains(directory.storeURL.path) == true)
        try await store.close()
        #expect(try Data(contentsOf: directory.storeURL) == before)

        let elsewhere = try SQLiteTestDirectory()
        defer { elsewhere.remove() }
        _ = await expectError(.storeOpen) { _ = try await open(elsewhere, readOnly: true) }
        #expect(!FileManager.default.fileExists(atPath: elsewhere.storeURL.path))
    }

    @Test func reopeningKeepsIdentifierAndData() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let identifier = store.identifier
        #expect(UUID(uuidString: identifier) != nil)
        let author = try await store.insert("Author", ["name": .string("Le Guin")])
        try await store.close()
        _ = await expectError(.storeOpen) { _ = try await store.fetch("Author") }
        _ = await expectError(.storeOpen) { _ = try await store.save(StoreChanges(deletes: [.init(objectID: author, expectedVersion: 1)])) }
        try await store.close()

        let again = try await open(directory)
        #expect(again.identifier == identifier)
        #expect(try await again.fetch("Author").map(\.objectID) == [author])
        // Keys are never reused, even after a delete.
        try await again.commit(StoreChanges(deletes: [.init(objectID: author, expectedVersion: 1)]))
        let next = try await again.insert("Author", ["name": .string("Other")])
        #expect((next.primaryKey ?? 0) > (author.primaryKey ?? 0))
    }

    @Test func notAStoreOrNotSQLiteIs134080() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.storeURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(repeating: 0x42, count: 4096).write(to: directory.storeURL)
        _ = await expectError(.storeOpen) { _ = try await open(directory) }

        try FileManager.default.removeItem(at: directory.storeURL)
        let queue = try DatabaseQueue(path: directory.storeURL.path)
        try await queue.write { db in try db.execute(sql: "CREATE TABLE other (x)") }
        try queue.close()
        let error = await expectError(.storeOpen) { _ = try await open(directory) }
        #expect(error?.message.contains("not a Strata store") == true)
    }

    // MARK: - Migration

    @Test func incompatibleModelsAre134100NamingEveryDifference() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        _ = try await store.insert("Book", ["title": .string("kept"), "pages": .integer(12)])
        try await store.close()

        let changed = Models.library(
            bookAttributes: [AttributeDescription(name: "edition", type: .integer32)],
            authorNameType: .integer64,
            dropPages: true
        )
        let error = await expectError(.incompatibleVersionHash) { _ = try await open(directory, model: changed) }
        let text = error.map { $0.message + "\n" + $0.details.joined(separator: "\n") } ?? ""
        #expect(text.contains("Book.pages: attribute removed"))
        #expect(text.contains("Author.name: attribute type changed from String to Integer 64"))
        #expect(text.contains("Book.edition: mandatory attribute added without a default value"))
        #expect(error?.details.count == 3)

        // Nothing was changed: the original model still opens.
        let again = try await open(directory)
        #expect(try await again.fetch("Book").first?["pages"] == .integer(12))
    }

    @Test func lightweightChangesMigrateInPlaceAndKeepData() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let review = try await store.insert("Review", ["stars": .integer(4)])
        let book = try await store.insert("Novel", ["title": .string("Dune"), "isbn": .string("1")])
        let identifier = store.identifier
        try await store.close()

        // Automatic migration off: the difference is reported, nothing changes.
        let added = Models.library(
            bookAttributes: [
                Models.optional("subtitle", .string),
                AttributeDescription(name: "rating", type: .integer16, defaultValue: .integer(3)),
            ],
            bookFetchIndexes: [FetchIndex(name: "byTitle", elements: [.init(property: "title")])],
            extraEntities: [
                EntityDescription(name: "Aardvark", attributes: [Models.optional("name", .string)]),
                EntityDescription(name: "Publisher", attributes: [Models.optional("name", .string)]),
            ]
        )
        let refused = await expectError(.incompatibleVersionHash) { _ = try await open(directory, model: added, migrates: false) }
        #expect(refused?.details.contains("Book.subtitle: optional attribute added (String)") == true)
        // Read-only: renumbering is needed, so it cannot open.
        _ = await expectError(.incompatibleVersionHash) { _ = try await open(directory, model: added, readOnly: true) }

        let migrated = try await open(directory, model: added)
        #expect(migrated.identifier == identifier)
        let books = try await migrated.fetch("Book")
        #expect(books.map(\.objectID) == [book])
        #expect(books.first?["title"] == .string("Dune"))
        #expect(books.first?["subtitle"] == .null)
        #expect(books.first?["rating"] == .integer(3))
        #expect(try await migrated.fetch("Review").map(\.objectID) == [review])
        #expect(try await migrated.count(migrated.resolved("Novel")) == 1)
        let publisher = try await migrated.insert("Publisher", ["name": .string("Ace")])
        let newBook = try await migrated.insert("Book", ["title": .string("New"), "subtitle": .string("s")])
        #expect((newBook.primaryKey ?? 0) > (book.primaryKey ?? 0))
        // The uniqueness constraint still holds after the renumbering.
        let clash = try await migrated.save(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["isbn": .string("1")])]))
        if case .constraintConflicts(let conflicts) = clash {
            #expect(conflicts.first?.existingObjectID == book)
        } else {
            Issue.record("expected a constraint conflict, got \(clash)")
        }
        try await migrated.close()

        // Reopening with the new model is a plain open.
        let reopened = try await open(directory, model: added, readOnly: true)
        #expect(try await reopened.fetch("Publisher").map(\.objectID) == [publisher])
        #expect(try await reopened.fetch("Book", "subtitle == 's'").map(\.objectID) == [newBook])
        try await reopened.close()

        // The file has exactly the target layout's indexes.
        let queue = try DatabaseQueue(path: directory.storeURL.path)
        let indexes = try await queue.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name")
        }
        try queue.close()
        #expect(indexes == migrated.schema.indexes.map(\.name).sorted())
        #expect(indexes.contains { $0.contains("BYTITLE") })
    }

    // MARK: - Concurrency

    @Test func aWriteLockHeldPastTheBusyTimeoutIs134090() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore(
            description: StoreDescription(url: directory.storeURL, type: .sqlite, busyTimeout: .milliseconds(200)),
            model: Models.library()
        )
        _ = try await store.insert("Tag", ["name": .string("a")])
        // Another connection (as another process would) holds the write lock.
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let other = try DatabaseQueue(path: directory.storeURL.path, configuration: configuration)
        try await other.writeWithoutTransaction { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        let error = await expectError(.storeTimeout) {
            _ = try await store.insert("Tag", ["name": .string("b")])
        }
        #expect(error?.message.contains(directory.storeURL.path) == true)
        // Reads are not blocked by a writer (WAL).
        #expect(try await store.count(store.resolved("Tag")) == 1)
        try await other.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") }
        try other.close()
        _ = try await store.insert("Tag", ["name": .string("c")])
        #expect(try await store.count(store.resolved("Tag")) == 2)
    }

    @Test func readsRunConcurrentlyWithWrites() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let batches = 20
        let perBatch = 50
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for batch in 0..<batches {
                    let inserts = (0..<perBatch).map { i in
                        StoreChanges.Insert(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("b\(batch)-\(i)"), "pages": .integer(Int64(i))])
                    }
                    try await store.commit(StoreChanges(inserts: inserts))
                }
            }
            for _ in 0..<3 {
                group.addTask {
                    var last = 0
                    for _ in 0..<15 {
                        let count = try await store.count(store.resolved("Book"))
                        // Each save is atomic: readers only see whole batches, never fewer rows than before.
                        #expect(count % perBatch == 0)
                        #expect(count >= last)
                        last = count
                        let rows = try await store.fetch("Book", "pages < 5")
                        #expect(rows.count % 5 == 0)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await store.count(store.resolved("Book")) == batches * perBatch)
    }
}
