import Foundation
import GRDB
import StrataModel
import StrataQuery
import Synchronization
import Testing
@testable import StrataStore
@testable import StrataSQLite

@Suite struct SQLiteStoreTests {
    typealias Models = SQLiteTestModels

    private func open(_ directory: SQLiteTestDirectory, model: ObjectModel = Models.library(), configuration: String? = nil, readOnly: Bool = false, migrates: Bool = true, url: URL? = nil) async throws -> SQLiteStore {
        try await SQLiteStore(
            description: StoreDescription(url: url ?? directory.storeURL, type: .sqlite, configuration: configuration, isReadOnly: readOnly,
                                          migratesAutomatically: migrates, busyTimeout: .seconds(2)),
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

    @Test func everyConnectionGetsTheDescribedPageCache() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        func cacheSizes(_ bytes: Int?) async throws -> (writer: Int, reader: Int) {
            var description = StoreDescription(url: directory.storeURL, type: .sqlite)
            if let bytes { description.pageCacheBytes = bytes }
            let store = try await SQLiteStore(description: description, model: Models.library())
            let database = try store.openDatabase()
            let writer = try await database.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0 }
            let reader = try await store.read(database) { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0 }
            try await store.close()
            return (writer, reader)
        }
        let standard = try await cacheSizes(nil)
        #expect(standard.writer == -StoreDescription.defaultPageCacheBytes / 1024)
        #expect(standard.reader == standard.writer)
        #expect(try await cacheSizes(8 * 1024 * 1024) == (-8192, -8192))
        // 0 leaves SQLite's own default (-2000: 2000 KiB).
        #expect(try await cacheSizes(0) == (-2000, -2000))
    }

    /// Every commit is synced to the write-ahead log before the save is
    /// answered (FULL is 2; GRDB's WAL set-up would leave NORMAL, 1).
    @Test func theWriterSyncsEveryCommit() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        for _ in 0..<2 {
            // Created, then opened again.
            let store = try await open(directory)
            let database = try store.openDatabase()
            let mode = try await database.writeWithoutTransaction { db in
                (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try String.fetchOne(db, sql: "PRAGMA journal_mode"))
            }
            #expect(mode.0 == 2)
            #expect(mode.1 == "wal")
            try await store.close()
        }
    }

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
        let permanentIDs = commit.permanentIDs
        let id = { (temporary: ObjectID) throws -> ObjectID in try #require(permanentIDs[temporary]) }
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

    /// The IDs of `count` new tags named `t0`, `t1`, …, in that order.
    private func insertTags(_ count: Int, into store: SQLiteStore) async throws -> [ObjectID] {
        let inserts = (0..<count).map { StoreChanges.Insert(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("t\($0)")]) }
        let permanentIDs = try await store.commit(StoreChanges(inserts: inserts)).permanentIDs
        let ids = inserts.compactMap { permanentIDs[$0.temporaryID] }
        #expect(ids.count == count)
        return ids
    }

    /// Up to ``SQLiteRowDecoder/largestKeptKeyList`` keys are read by a kept
    /// statement, the list padded to a power of two with its last key:
    /// every length reads exactly the rows asked, whichever kept statement
    /// read a shorter or longer list before it on the connection.
    @Test func snapshotsForFewIDsReadExactlyTheRowsAsked() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let count = SQLiteRowDecoder.largestKeptKeyList + 6
        let ids = try await insertTags(count, into: store)
        let missing = ObjectID(storeIdentifier: store.identifier, entityName: "Tag", key: .permanent(99_999))
        for length in [1, 2, 3, 4, 5, 7, 8, 9, 31, 33, 63, 64, 65, count, 3, 1] {
            let asked = Array(ids.suffix(length).reversed())
            let snapshots = try await store.snapshots(for: asked)
            #expect(snapshots.map(\.objectID) == asked, "\(length) keys")
            #expect(snapshots.map { $0["name"] } == asked.map { id in .string("t\(ids.firstIndex(of: id) ?? -1)") }, "\(length) keys")
            // A key that names no row, among them, is left out.
            #expect(try await store.snapshots(for: [missing] + asked).map(\.objectID) == asked, "\(length) keys and a missing one")
        }
        #expect((1...9).map(SQLiteRowDecoder.keptKeyListLength(for:)) == [1, 2, 4, 4, 8, 8, 8, 8, 16])
        #expect(SQLiteRowDecoder.keptKeyListLength(for: SQLiteRowDecoder.largestKeptKeyList) == SQLiteRowDecoder.largestKeptKeyList)
    }

    /// A save's optimistic-locking check reads the versions of the rows it
    /// updates or deletes with the same padded, kept statements: at every
    /// length exactly the stale objects conflict, with their current
    /// version and snapshot, and nothing is written.
    @Test func versionChecksOfEveryLengthFindExactlyTheStaleObjects() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let count = SQLiteRowDecoder.largestKeptKeyList + 6
        let ids = try await insertTags(count, into: store)
        // Every third tag moves to version 2 behind the savers' backs.
        let moved = Set(ids.enumerated().filter { $0.offset % 3 == 0 }.map(\.element))
        _ = try await store.commit(StoreChanges(updates: moved.map { .init(objectID: $0, expectedVersion: 1, values: ["name": .string("moved")]) }))
        for length in [1, 2, 3, 5, 8, 9, 64, 65, count] {
            let asked = Array(ids.prefix(length).reversed())
            let result = try await store.save(StoreChanges(updates: asked.map { .init(objectID: $0, expectedVersion: 1, values: ["name": .string("lost")]) }))
            guard case .conflicts(let conflicts) = result else {
                Issue.record("\(length) updates: \(result), not conflicts")
                continue
            }
            #expect(Set(conflicts.map(\.objectID)) == moved.intersection(asked), "\(length) updates")
            #expect(conflicts.allSatisfy { $0.expectedVersion == 1 && $0.currentVersion == 2 && $0.currentSnapshot?["name"] == .string("moved") }, "\(length) updates")
        }
        let names = try await store.snapshots(for: ids).map { $0["name"] }
        #expect(!names.contains(.string("lost")), "a refused save writes nothing")
        // Up to date, every length commits.
        let unmoved = ids.filter { !moved.contains($0) }
        let committed = try await store.save(StoreChanges(updates: unmoved.map { .init(objectID: $0, expectedVersion: 1, values: ["name": .string("kept")]) }))
        guard case .committed = committed else {
            Issue.record("\(committed), not committed")
            return
        }
    }

    @Test func snapshotsForManyIDsAreChunked() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let count = SQLiteRowDecoder.chunkSize + 500
        let ids = try await insertTags(count, into: store).reversed()
        let snapshots = try await store.snapshots(for: Array(ids))
        #expect(snapshots.count == count)
        #expect(snapshots.map(\.objectID) == Array(ids))
        #expect(snapshots.first?["name"] == .string("t\(count - 1)"))
    }

    @Test func concurrentSavesShareCommitsYetEachIsAllOrNothing() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let book = try await store.insert("Book", ["title": .string("v1"), "isbn": .string("taken")])
        // 60 saves at once: inserts, two updates of one book from version 1
        // (only the first can win), and a uniqueness clash.
        let results = await withTaskGroup(of: (Int, Result<StoreSaveResult, any Error>).self) { group in
            for index in 0..<60 {
                group.addTask {
                    let changes: StoreChanges
                    switch index {
                    case 10, 20:
                        changes = StoreChanges(
                            inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("with update \(index)")])],
                            updates: [.init(objectID: book, expectedVersion: 1, values: ["title": .string("by \(index)")])]
                        )
                    case 30:
                        changes = StoreChanges(inserts: [
                            .init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("with clash")]),
                            .init(temporaryID: .temporary(entityName: "Book"), values: ["isbn": .string("taken")]),
                        ])
                    default:
                        changes = StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("t\(index)")])])
                    }
                    do {
                        return (index, .success(try await store.save(changes)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var all: [Int: Result<StoreSaveResult, any Error>] = [:]
            for await (index, result) in group { all[index] = result }
            return all
        }
        var committed = 0, conflicted = 0, clashed = 0
        for (_, result) in results {
            switch result {
            case .success(.committed): committed += 1
            case .success(.conflicts): conflicted += 1
            case .success(.constraintConflicts): clashed += 1
            case .failure(let error): Issue.record("save failed: \(error)")
            }
        }
        #expect(committed == 58)
        #expect(conflicted == 1)
        #expect(clashed == 1)
        // Nothing of the refused saves was written; everything else was.
        let tags = try await store.count(ResolvedFetch(entityName: "Tag"))
        #expect(tags == 58)
        let snapshot = try #require(try await store.snapshots(for: [book]).first)
        #expect(snapshot.version == 2)
        #expect(try await store.count(ResolvedFetch(entityName: "Book")) == 1)
    }

    @Test func closingWritesTheSavesAlreadyQueued() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let outcomes = await withTaskGroup(of: Bool?.self) { group in
            for index in 0..<30 {
                group.addTask {
                    let changes = StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("q\(index)")])])
                    do {
                        if case .committed = try await store.save(changes) { return true }
                        return false
                    } catch {
                        return nil // refused because the store had closed: fine
                    }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(1))
                try? await store.close()
                return false
            }
            var committed = 0
            for await outcome in group where outcome == true { committed += 1 }
            return committed
        }
        let reopened = try await open(directory)
        #expect(try await reopened.count(ResolvedFetch(entityName: "Tag")) == outcomes)
        try await reopened.close()
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

    /// Saves committed together share one key allocation: those rolled back
    /// to their savepoint (a broken uniqueness constraint) leave gaps, no key
    /// is handed out twice, and the highest one is recorded for later saves.
    @Test func groupedSavesNeverShareAKey() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let results = try await withThrowingTaskGroup(of: StoreSaveResult.self) { group in
            for i in 0..<40 {
                group.addTask {
                    // Every fourth save clashes with the others on "dup".
                    let isbn = i % 4 == 0 ? "dup" : "isbn-\(i)"
                    return try await store.save(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("t\(i)"), "isbn": .string(isbn)])]))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var keys: [Int64] = []
        var refused = 0
        for result in results {
            switch result {
            case .committed(let commit): keys += commit.insertedIDs.compactMap(\.primaryKey)
            case .constraintConflicts: refused += 1
            case .conflicts: Issue.record("no version checks were asked for")
            }
        }
        #expect(keys.count == 31)
        #expect(refused == 9)
        #expect(Set(keys).count == keys.count)
        #expect(try await store.count(StoreFixture.all("Book")) == 31)
        try await store.close()

        let reopened = try await open(directory)
        let later = try await reopened.insert("Book", ["title": .string("later")])
        #expect(try #require(later.primaryKey) > keys.max() ?? 0)
        try await reopened.close()
    }

    /// A small save's bad value is reported before its transaction, so it
    /// wins over a version conflict found in the transaction; a large save
    /// that conflicts writes none of its inserts; two large saves grouped
    /// in one commit both write all their rows.
    @Test func largeAndSmallSavesReportValuesConflictsAndGroupsAsBefore() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let item = try await store.insert("Item", ["i16": .integer(1)])
        try await store.commit(StoreChanges(updates: [.init(objectID: item, expectedVersion: 1, values: ["i16": .integer(2)])]))

        let stale = StoreChanges.Update(objectID: item, expectedVersion: 1, values: ["i16": .integer(3)])
        let error = await expectError(.invalidValue) {
            _ = try await store.save(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Item"), values: ["i16": .integer(70000)])], updates: [stale]))
        }
        #expect(error?.message == "Item.i16: 70000 does not fit Integer 16")

        let many = (0..<3000).map { i in StoreChanges.Insert(temporaryID: .temporary(entityName: "Item"), values: ["i32": .integer(Int64(i))]) }
        let conflicted = try await store.save(StoreChanges(inserts: many, updates: [stale]))
        guard case .conflicts(let conflicts) = conflicted else {
            Issue.record("expected a version conflict, got \(conflicted)")
            return
        }
        #expect(conflicts.map(\.objectID) == [item])
        #expect(try await store.count(store.resolved("Item")) == 1)

        async let first = store.save(StoreChanges(inserts: many))
        async let second = store.save(StoreChanges(inserts: (0..<3000).map { i in
            StoreChanges.Insert(temporaryID: .temporary(entityName: "Item"), values: ["i32": .integer(Int64(-i))])
        }))
        var keys: [Int64] = []
        for result in try await [first, second] {
            guard case .committed(let commit) = result else {
                Issue.record("expected a commit, got \(result)")
                continue
            }
            keys += commit.insertedIDs.compactMap(\.primaryKey)
        }
        #expect(keys.count == 6000)
        #expect(Set(keys).count == 6000)
        #expect(try await store.count(store.resolved("Item")) == 6001)
        #expect(try await store.count(store.resolved("Item", "i32 < 0")) == 2999)
        try await store.close()
    }

    /// A store made with a page size has it (and its checkpoint threshold
    /// is counted in it); opened again with another, it keeps its own and
    /// its rows; a size SQLite cannot use is refused before any file is made.
    @Test func aNewStoreTakesItsPageSizeAndAnExistingOneKeepsIts() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        func pageSize(_ store: SQLiteStore) async throws -> Int? {
            let database = try store.openDatabase()
            return try await store.read(database) { db in try Int.fetchOne(db, sql: "PRAGMA page_size") }
        }
        let description = StoreDescription(url: directory.storeURL, type: .sqlite, walCheckpointBytes: 1024 * 1024, pageSize: 1024)
        let store = try await SQLiteStore(description: description, model: Models.library())
        #expect(try await pageSize(store) == 1024)
        #expect(store.walMonitor.checkpointFrames == 1024)
        let id = try await store.insert("Item", ["str": .string("kept"), "blob": .binary(Data(repeating: 3, count: 5000))])
        try await store.close()

        var larger = description
        larger.pageSize = 8192
        let reopened = try await SQLiteStore(description: larger, model: Models.library())
        #expect(try await pageSize(reopened) == 1024)
        #expect(reopened.walMonitor.checkpointFrames == 1024, "the threshold is counted in the file's own pages")
        #expect(try await reopened.fetch("Item").map(\.objectID) == [id])
        try await reopened.close()

        let fresh = directory.url.appendingPathComponent("other.sqlite")
        for invalid in [0, 1000, 256, 131_072] {
            let refused = await #expect(throws: StrataError.self) {
                try await SQLiteStore(description: StoreDescription(url: fresh, type: .sqlite, pageSize: invalid), model: Models.library())
            }
            #expect(refused?.code == .storeOpen)
            #expect(refused?.message.contains("page size \(invalid)") == true, "\(String(describing: refused))")
        }
        #expect(!FileManager.default.fileExists(atPath: fresh.path))
        #expect(StoreDescription.pageSizes == [512, 1024, 2048, 4096, 8192, 16_384, 32_768, 65_536])
    }

    /// The log is checkpointed into the file after a save that takes it
    /// past the description's threshold (here 1000 frames) is answered,
    /// with the store still open; small saves leave it alone.
    @Test func theLogIsCheckpointedAfterTheSaveIsAnswered() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore(
            description: StoreDescription(url: directory.storeURL, type: .sqlite, busyTimeout: .seconds(2), walCheckpointBytes: 1000 * 4096),
            model: Models.library()
        )
        #expect(store.walMonitor.checkpointFrames == 1000)
        #expect(StoreDescription(url: nil, type: .sqlite).walCheckpointBytes == 40 * 1024 * 1024)
        // The threshold is counted in the file's own pages.
        let monitor = SQLiteWALMonitor(checkpointBytes: 40 * 1024 * 1024)
        #expect(monitor.checkpointFrames == 10_240)
        monitor.setPageSize(65_536)
        #expect(monitor.checkpointFrames == 640)
        func fileSize() throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: directory.storeURL.path)[.size] as? Int)
        }
        _ = try await store.insert("Item", ["str": .string("small")])
        #expect(store.walMonitor.checkpointCount == 0)
        let before = try fileSize()

        // About 6 MB of rows: some 1500 pages in the log.
        let blob = Data(repeating: 7, count: 4000)
        try await store.commit(StoreChanges(inserts: (0..<1500).map { i in
            .init(temporaryID: .temporary(entityName: "Item"), values: ["i32": .integer(Int64(i)), "blob": .binary(blob)])
        }))
        let deadline = ContinuousClock.now + .seconds(20)
        while store.walMonitor.checkpointCount == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(store.walMonitor.checkpointCount == 1)
        // The checkpoint copied the rows into the file, the store still open.
        #expect(try fileSize() > before + 5_000_000)
        #expect(try await store.count(store.resolved("Item")) == 1501)
        try await store.close()
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
        // Read-only: tables and columns must be added, so it cannot open.
        _ = await expectError(.incompatibleVersionHash) { _ = try await open(directory, model: added, readOnly: true) }

        let migrated = try await open(directory, model: added)
        #expect(migrated.identifier == identifier)
        // The stored entities keep their numbers; the added ones follow them.
        let before = Models.library().entities.map(\.name)
        #expect(before.allSatisfy { migrated.schema.entityNumber(of: $0) == store.schema.entityNumber(of: $0) })
        #expect(migrated.schema.entityNumber(of: "Aardvark") == Int64(before.count + 1))
        #expect(migrated.schema.entityNumber(of: "Publisher") == Int64(before.count + 2))
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
        // The uniqueness constraint still holds after the migration.
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

    @Test func entityNumbersStayWhenEntitiesAreAddedAnywhere() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory, model: Models.configured(), configuration: "Main")
        let numbers = store.schema.entityNumberMap
        // A new store numbers its entities 1… in name order.
        #expect(numbers == ["Author": 1, "Book": 2, "Item": 3, "Novel": 4, "Review": 5, "Shelf": 6, "Tag": 7])
        let book = try await store.insert("Book", ["title": .string("Dune")])
        let novel = try await store.insert("Novel", ["title": .string("Neuromancer"), "genre": .string("SF")])
        let review = try await store.insert("Review", ["stars": .integer(5), "book": .object(novel)])
        try await store.close()
        let layout = try await SQLiteFile.metadata(directory.storeURL, key: "layout")
        let pristine = directory.url.appendingPathComponent("pristine.sqlite")
        try FileManager.default.copyItem(at: directory.storeURL, to: pristine)

        func expectRows(_ store: SQLiteStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let books = try await store.fetch("Book")
            #expect(books.map(\.objectID) == [book, novel], sourceLocation: sourceLocation)
            #expect(books.map(\.objectID.entityName) == ["Book", "Novel"], sourceLocation: sourceLocation)
            #expect(books.last?["genre"] == .string("SF"), sourceLocation: sourceLocation)
            #expect(try await store.fetch("Book", subentities: false).map(\.objectID) == [book], sourceLocation: sourceLocation)
            #expect(try await store.fetch("Novel").map(\.objectID) == [novel], sourceLocation: sourceLocation)
            #expect(try await store.fetch("Review").map { $0["book"] } == [.object(novel)], sourceLocation: sourceLocation)
            #expect(try await store.destinations(of: "book", for: review) == [novel], sourceLocation: sourceLocation)
            #expect(try await store.snapshots(for: [novel]).map(\.objectID.entityName) == ["Novel"], sourceLocation: sourceLocation)
        }

        // `AAA` (sorting first) added to another configuration: nothing changes,
        // read-only or not.
        let elsewhere = Models.configured(extra: [Models.aaa])
        let before = try Data(contentsOf: directory.storeURL)
        let readOnly = try await open(directory, model: elsewhere, configuration: "Main", readOnly: true)
        #expect(readOnly.schema.entityNumberMap == numbers)
        try await expectRows(readOnly)
        try await readOnly.close()
        #expect(try Data(contentsOf: directory.storeURL) == before)
        let writable = try await open(directory, model: elsewhere, configuration: "Main")
        #expect(writable.schema.entityNumberMap == numbers)
        try await expectRows(writable)
        try await writable.close()
        #expect(try await SQLiteFile.metadata(directory.storeURL, key: "layout") == layout, "no migration")
        // The other configuration's own new store numbers its entity 1.
        let other = try await open(directory, model: elsewhere, configuration: "Other", url: directory.url.appendingPathComponent("other.sqlite"))
        #expect(other.schema.entityNumberMap == ["AAA": 1])
        try await other.close()

        // `AAA` added to this configuration: a lightweight migration adding
        // its table; the stored rows keep their numbers.
        let here = Models.configured(extra: [Models.aaa], extraInMain: true)
        let refused = await expectError(.incompatibleVersionHash) {
            _ = try await open(directory, model: here, configuration: "Main", readOnly: true, url: pristine)
        }
        #expect(refused?.details == ["AAA: entity added"], "a new table is needed, no renumbering")
        let migrated = try await open(directory, model: here, configuration: "Main")
        var extended = numbers
        extended["AAA"] = 8
        #expect(migrated.schema.entityNumberMap == extended)
        try await expectRows(migrated)
        let aaa = try await migrated.insert("AAA", ["note": .string("first")])
        let second = try await migrated.insert("Novel", ["title": .string("Hyperion")])
        try await migrated.close()
        #expect(try await SQLiteFile.entityNumbers(directory.storeURL, table: "ZBOOK") == [2, 4, 4])
        #expect(try await SQLiteFile.entityNumbers(directory.storeURL, table: "ZAAA") == [8])

        // Reopened read-only with the extended model: a plain open.
        let reopened = try await open(directory, model: here, configuration: "Main", readOnly: true)
        #expect(reopened.schema.entityNumberMap == extended)
        #expect(try await reopened.fetch("Novel").map(\.objectID) == [novel, second])
        #expect(try await reopened.fetch("AAA").map(\.objectID) == [aaa])
        #expect(try await reopened.fetch("Review").map { $0["book"] } == [.object(novel)])
        try await reopened.close()
        // The untouched copy still opens read-only with the model it was written with.
        let original = try await open(directory, model: Models.configured(), configuration: "Main", readOnly: true, url: pristine)
        try await expectRows(original)
        try await original.close()
    }

    @Test func removingAnEntityWithRowsIsStill134100() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory, model: Models.configured(), configuration: "Main")
        _ = try await store.insert("Review", ["stars": .integer(1)])
        try await store.close()
        let error = await expectError(.incompatibleVersionHash) {
            _ = try await open(directory, model: Models.configured(removing: ["Review"]), configuration: "Main")
        }
        #expect(error?.details.contains("Review: entity removed from the model") == true)
        let again = try await open(directory, model: Models.configured(), configuration: "Main")
        #expect(try await again.count(again.resolved("Review")) == 1)
        try await again.close()
    }

    @Test func entityNamesThatSpellReservedTablesGetOtherNames() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let model = Models.reservedNames
        let store = try await open(directory, model: model)
        let schema = store.schema
        for name in schema.tables.map(\.name) + schema.joinTables.map(\.name) + schema.indexes.map(\.name) {
            #expect(!SQLSchema.isReserved(name), "\(name)")
        }
        #expect(schema.table(for: "_METADATA")?.name == "Z_METADATA_2")
        #expect(schema.table(for: "_PRIMARYKEY")?.name == "Z_PRIMARYKEY_2")
        #expect(schema.table(for: "_STRATA_MIGRATING_1")?.name == "Z__STRATA_MIGRATING_1")
        #expect(schema.column(forAttribute: "_STRATA_MIGRATING_1", in: "_STRATA_MIGRATING_1") == "Z__STRATA_MIGRATING_1")
        #expect(schema.joinTables.map(\.name).sorted() == ["Z__PRIMARYKEY_ITEMS", "Z__STRATA_X"])

        let item = ObjectID.temporary(entityName: "_STRATA_MIGRATING_1")
        let meta = ObjectID.temporary(entityName: "_METADATA")
        let commit = try await store.commit(StoreChanges(inserts: [
            .init(temporaryID: item, values: ["_STRATA_MIGRATING_1": .string("i")]),
            .init(temporaryID: meta, values: ["value": .string("m")]),
            .init(temporaryID: .temporary(entityName: "_PRIMARYKEY"), values: ["value": .integer(7)], toMany: ["items": [item]]),
            .init(temporaryID: .temporary(entityName: "STRATA"), values: [:], toMany: ["x": [meta]]),
        ]))
        #expect(commit.permanentIDs.count == 4)
        let identifier = store.identifier
        try await store.close()

        // The store's own tables are intact beside the entities' ones.
        let tables = try await SQLiteFile.tables(directory.storeURL)
        #expect(tables == ["ZSTRATA", "Z_METADATA", "Z_METADATA_2", "Z_PRIMARYKEY", "Z_PRIMARYKEY_2", "Z_STRATA_HISTORY", "Z_STRATA_HISTORY_CHANGE", "Z_STRATA_HISTORY_CONSUMER", "Z_STRATA_HISTORY_PURGE", "Z_STRATA_HISTORY_TOMBSTONE", "Z__PRIMARYKEY_ITEMS", "Z__STRATA_MIGRATING_1", "Z__STRATA_X"])
        #expect(try await SQLiteFile.metadata(directory.storeURL, key: "identifier") == identifier)

        // Reopening, and a lightweight migration, work on them.
        let extended = ObjectModel(name: "Reserved", entities: model.entities.map { entity in
            guard entity.name == "_METADATA" else { return entity }
            var copy = entity
            copy.attributes.append(Models.optional("extra", .string))
            return copy
        })
        let reopened = try await open(directory, model: extended)
        #expect(reopened.identifier == identifier)
        #expect(try await reopened.fetch("_METADATA").map { $0["value"] } == [.string("m")])
        #expect(try await reopened.fetch("_STRATA_MIGRATING_1").map { $0["_STRATA_MIGRATING_1"] } == [.string("i")])
        let owner = try #require(try await reopened.fetch("_PRIMARYKEY").first)
        #expect(try await reopened.destinations(of: "items", for: owner.objectID).count == 1)
        let strata = try #require(try await reopened.fetch("STRATA").first)
        #expect(try await reopened.destinations(of: "x", for: strata.objectID).count == 1)
        try await reopened.close()
    }

    // MARK: - References to missing objects

    /// The same contract on every store kind: a to-one value or to-many
    /// destination naming a saved object that does not exist fails the
    /// whole save with 133000 and writes nothing.
    @Test(arguments: StoreKind.allCases)
    func referencesToMissingObjectsFailTheWholeSave(_ kind: StoreKind) async throws {
        typealias F = StoreFixture
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let t = (a: ObjectID.temporary(entityName: "Author"), gone: ObjectID.temporary(entityName: "Author"),
                     b0: ObjectID.temporary(entityName: "Book"), b1: ObjectID.temporary(entityName: "Book"),
                     e: ObjectID.temporary(entityName: "EBook"), tag: ObjectID.temporary(entityName: "Tag"))
            let saved = try await F.commit(store, StoreChanges(inserts: [
                .init(temporaryID: t.a, values: ["name": .string("A")]),
                .init(temporaryID: t.gone, values: ["name": .string("G")], toMany: ["books": [t.b1]]),
                .init(temporaryID: t.b0, values: ["isbn": .string("0"), "author": .object(t.a)]),
                .init(temporaryID: t.b1, values: ["isbn": .string("1")]),
                .init(temporaryID: t.e, values: ["isbn": .string("e")]),
                .init(temporaryID: t.tag, values: ["name": .string("t")], toMany: ["books": [t.b0]]),
            ]))
            let permanentIDs = saved.permanentIDs
            func p(_ id: ObjectID) throws -> ObjectID {
                guard let permanent = permanentIDs[id] else { throw F.FixtureError.notCommitted }
                return permanent
            }
            let (a, gone, b0, b1, ebook, tag) = (try p(t.a), try p(t.gone), try p(t.b0), try p(t.b1), try p(t.e), try p(t.tag))
            #expect(try await store.destinations(of: "books", for: gone) == [b1])
            try await F.commit(store, StoreChanges(deletes: [.init(objectID: gone, expectedVersion: 1)]))
            let madeUp = ObjectID(storeIdentifier: store.identifier, entityName: "Author", key: .permanent(9999))
            let madeUpBook = ObjectID(storeIdentifier: store.identifier, entityName: "Book", key: .permanent(9999))
            let bookAsEBook = ObjectID(storeIdentifier: store.identifier, entityName: "EBook", key: b0.key)

            // Objects gone (or never there) have no destinations.
            #expect(try await store.destinations(of: "books", for: gone) == [])
            #expect(try await store.destinations(of: "mentor", for: gone) == [])
            #expect(try await store.destinations(of: "books", for: madeUp) == [])
            #expect(try await store.destinations(of: "author", for: b0) == [a])

            let counts = { () async throws -> [Int] in
                var result: [Int] = []
                for entity in ["Author", "Book", "Tag", "Chapter", "Shelf"] { result.append(try await store.count(F.all(entity))) }
                return result
            }
            let countsBefore = try await counts()
            let snapshotsBefore = try await store.snapshots(for: [a, b0, b1, ebook, tag])
            let linksBefore = [try await store.destinations(of: "books", for: tag), try await store.destinations(of: "books", for: a)]
            let fresh = ObjectID.temporary(entityName: "Book")
            let cases: [(String, StoreChanges, String)] = [
                ("insert, to-one to a deleted object",
                 StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("ok")]),
                                        .init(temporaryID: fresh, values: ["author": .object(gone)])]),
                 "Book.author of \(fresh) points to \(gone), which no longer exists"),
                ("insert, to-one to a made-up key",
                 StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Author"), values: ["mentor": .object(madeUp)])]),
                 "points to \(madeUp)"),
                ("update, to-one",
                 StoreChanges(updates: [.init(objectID: b1, expectedVersion: 1, values: ["title": .string("x"), "author": .object(gone)])]),
                 "Book.author of \(b1) points to \(gone), which no longer exists"),
                ("insert, to-many read through an inverse foreign key",
                 StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Author"), values: [:], toMany: ["books": [b1, madeUpBook]])]),
                 "points to \(madeUpBook)"),
                ("update, many-to-many",
                 StoreChanges(updates: [.init(objectID: tag, expectedVersion: 1, values: [:], toMany: ["books": [b1, madeUpBook]])]),
                 "Tag.books of \(tag) points to \(madeUpBook), which no longer exists"),
                ("insert, ordered to-many without inverse",
                 StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Shelf"), values: [:], toMany: ["books": [ebook, madeUpBook]])]),
                 "points to \(madeUpBook)"),
                ("an object this save deletes",
                 StoreChanges(updates: [.init(objectID: a, expectedVersion: 1, values: [:], toMany: ["favourites": [b1]])],
                              deletes: [.init(objectID: b1, expectedVersion: 1)]),
                 "Author.favourites of \(a) points to \(b1), which no longer exists"),
                ("an ID naming a subentity the row is not",
                 StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Chapter"), values: ["book": .object(bookAsEBook)])]),
                 "points to \(bookAsEBook)"),
                ("one bad reference among many good ones",
                 StoreChanges(inserts: (0..<200).map { i in
                     .init(temporaryID: .temporary(entityName: "Chapter"), values: ["number": .integer(Int64(i)), "book": .object(i == 150 ? madeUpBook : b0)])
                 }),
                 "points to \(madeUpBook)"),
            ]
            for (label, changes, text) in cases {
                do {
                    let result = try await store.save(changes)
                    Issue.record("\(label): saved \(result)")
                } catch let error as StrataError {
                    #expect(error.code == .objectNotFound, "\(label): \(error)")
                    if kind == .sqlite {
                        #expect(error.message.contains(text), "\(label): \(error.message)")
                        #expect(error.message.hasSuffix("which no longer exists"), "\(label): \(error.message)")
                    } else {
                        #expect(error.message.contains(text.components(separatedBy: "points to ").last?.components(separatedBy: ",").first ?? ""), "\(label): \(error.message)")
                    }
                }
                #expect(try await counts() == countsBefore, "\(label): nothing was written")
                #expect(try await store.snapshots(for: [a, b0, b1, ebook, tag]) == snapshotsBefore, "\(label): nothing was written")
                #expect([try await store.destinations(of: "books", for: tag), try await store.destinations(of: "books", for: a)] == linksBefore, "\(label)")
            }

            // Still fine: an ancestor's name for a subentity's row (stored as
            // the row's entity), and an update of an object gone meanwhile
            // without version checks (it does nothing).
            let chapter = ObjectID.temporary(entityName: "Chapter")
            let asBook = ObjectID(storeIdentifier: store.identifier, entityName: "Book", key: ebook.key)
            let commit = try await F.commit(store, StoreChanges(inserts: [.init(temporaryID: chapter, values: ["book": .object(asBook)])]))
            #expect(try await F.snapshot(store, try #require(commit.permanentIDs[chapter]))["book"] == .object(ebook))
            let ghost = try await F.commit(store, StoreChanges(
                updates: [.init(objectID: gone, expectedVersion: 1, values: ["mentor": .object(madeUp)])], checksVersions: false
            ))
            #expect(ghost.versions.isEmpty)
            // With version checks, the gone object is a conflict first.
            let conflict = try await store.save(StoreChanges(updates: [.init(objectID: gone, expectedVersion: 1, values: ["mentor": .object(madeUp)])]))
            #expect(conflict == .conflicts([StoreConflict(objectID: gone, expectedVersion: 1, currentVersion: 0, currentSnapshot: nil)]))
            try await store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func entitiesTheStoreDoesNotHoldAreInvalidValues(_ kind: StoreKind) async throws {
        typealias F = StoreFixture
        let model = ObjectModel(name: "StoreFixture", entities: F.model.entities, configurations: [
            ConfigurationDescription(name: "Books", entities: ["Book", "Tag", "Chapter"]),
            ConfigurationDescription(name: "People", entities: ["Author", "Shelf", "Sample"]),
        ])
        try await TestDirectory.with { directory in
            let books = try await StoreFixture.factory.open(
                StoreDescription(url: kind.url(in: directory), type: kind.storeType, configuration: "Books"), model: model
            )
            let author = ObjectID(storeIdentifier: books.identifier, entityName: "Author", key: .permanent(1))
            let attempts: [(String, () async throws -> Void)] = [
                ("fetch", { _ = try await books.fetchSnapshots(F.all("Author")) }),
                ("fetch IDs", { _ = try await books.fetchObjectIDs(F.all("Author")) }),
                ("count", { _ = try await books.count(F.all("Author")) }),
                ("insert", { _ = try await books.save(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Author"), values: [:])])) }),
                ("destinations", { _ = try await books.destinations(of: "books", for: author) }),
            ]
            for (label, attempt) in attempts {
                do {
                    try await attempt()
                    Issue.record("\(label) of an entity the store does not hold succeeded")
                } catch let error as StrataError {
                    #expect(error.code == .invalidValue, "\(label): \(error)")
                    #expect(error.message.contains("Author"), "\(label): \(error.message)")
                }
            }
            try await books.close()
        }
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

    /// Waits (at most 20 s) until the store's save queue is as `condition`
    /// says: tests that must know a group was formed.
    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw StrataError(.storeTimeout, "the saves never queued as expected") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// A streamed save of `Tag`s whose supplier stops after the first
    /// chunk: once this returns it holds the writer (its group is formed,
    /// nothing queued behind it) until `release` supplies the rest.
    private func streamedSaveHoldingTheWriter(_ store: SQLiteStore, name: String) async throws -> (rows: Int, release: @Sendable () -> Void, result: Task<StoreSaveResult, any Error>) {
        let rows = (0..<(SQLiteInsertPipeline.chunkRows + 10)).map { index in
            StoreChanges.Insert(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("\(name) \(index)")])
        }
        let feed = StoreInsertFeed(temporaryIDs: rows.map(\.temporaryID))
        feed.supply(Array(rows.prefix(SQLiteInsertPipeline.chunkRows)))
        let result = Task { try await store.save(StoreChanges(), streaming: feed) }
        try await waitUntil { store.isCommitting && store.queuedSaveCount == 0 }
        return (rows.count, { feed.supply(Array(rows.dropFirst(SQLiteInsertPipeline.chunkRows))) }, result)
    }

    /// The writer drains waiting saves group after group without leaving
    /// its queue, but not for good: once a drain has run past its slice,
    /// the writer's other work queued meanwhile is done before the next
    /// group.
    @Test func aLongDrainLetsTheWritersOtherWorkThrough() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        // A streamed save holds the writer while its supplier is slow...
        let streamed = try await streamedSaveHoldingTheWriter(store, name: "streamed")
        // ...while a save queues behind it, and other work on the writer
        // after that (what it sees tells which ran first).
        async let queued = store.insert("Tag", ["name": .string("queued")])
        try await waitUntil { store.queuedSaveCount == 1 }
        let database = try store.openDatabase()
        let (seen, seeing) = AsyncStream<Int?>.makeStream()
        database.asyncWriteWithoutTransaction { db in
            seeing.yield(try? Int.fetchOne(db, sql: "SELECT count(*) FROM ZTAG WHERE ZNAME = 'queued'"))
            seeing.finish()
        }
        // The streamed group outlasts the drain's slice.
        try await Task.sleep(for: SQLiteStore.drainSlice * 3)
        streamed.release()
        var seenIterator = seen.makeAsyncIterator()
        let otherWork = await seenIterator.next()
        guard case .committed = try await streamed.result.value else { Issue.record("the streamed save did not commit"); return }
        _ = try await queued
        #expect(otherWork == .some(0), "the other work ran after the queued save: the drain kept the writer")
        #expect(try await store.count(store.resolved("Tag")) == streamed.rows + 1)
        try await store.close()
    }

    /// Closing refuses new saves at once (134080), then waits for the
    /// saves already accepted, which are written.
    @Test func closingRefusesNewSavesAndWritesTheAcceptedOnes() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        // An accepted save holds the writer while its supplier is slow.
        let accepted = try await streamedSaveHoldingTheWriter(store, name: "accepted")
        async let closing: Void = store.close()
        // The store is closed to new work while the accepted save is still
        // being written.
        let deadline = ContinuousClock.now + .seconds(20)
        while (try? await store.count(store.resolved("Tag"))) != nil {
            guard ContinuousClock.now < deadline else { throw StrataError(.storeTimeout, "the store never refused new work while closing") }
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(store.isCommitting)
        let refusal = await expectError(.storeOpen) { _ = try await store.insert("Tag", ["name": .string("late")]) }
        #expect(refusal != nil)
        accepted.release()
        guard case .committed = try await accepted.result.value else { Issue.record("the accepted save did not commit"); return }
        try await closing

        let reopened = try await open(directory)
        #expect(try await reopened.count(reopened.resolved("Tag")) == accepted.rows)
        try await reopened.close()
    }

    /// The answers to `saves`, written in one group: queued one after the
    /// other (so that their order in the group is known) behind a
    /// streamed save holding the writer, by index.
    private func answersInOneGroup(_ store: SQLiteStore, _ saves: [StoreChanges]) async throws -> [Int: Result<StoreSaveResult, any Error>] {
        let streamed = try await streamedSaveHoldingTheWriter(store, name: "streamed")
        let (answers, answering) = AsyncStream<(Int, Result<StoreSaveResult, any Error>)>.makeStream()
        for (index, changes) in saves.enumerated() {
            store.save(changes) { answering.yield((index, $0)) }
            try await waitUntil { store.queuedSaveCount == index + 1 }
        }
        streamed.release()
        _ = try await streamed.result.value
        var results: [Int: Result<StoreSaveResult, any Error>] = [:]
        for await (index, result) in answers {
            results[index] = result
            if results.count == saves.count { break }
        }
        return results
    }

    /// ``answersInOneGroup(_:_:)``, with every statement the store's
    /// writer ran meanwhile (the streamed save's first).
    private func answersInOneGroupTraced(_ store: SQLiteStore, _ saves: [StoreChanges]) async throws -> (results: [Int: Result<StoreSaveResult, any Error>], statements: [String]) {
        let database = try store.openDatabase()
        let statements = Mutex<[String]>([])
        try await database.writeWithoutTransaction { db in
            db.trace { event in
                if case .statement(let statement) = event { statements.withLock { $0.append(statement.sql) } }
            }
        }
        let results = try await answersInOneGroup(store, saves)
        try await database.writeWithoutTransaction { db in db.trace(options: []) }
        return (results, statements.withLock { $0 })
    }

    /// Every book's title, in order.
    private func bookTitles(_ store: SQLiteStore) async throws -> [String] {
        try await store.fetch("Book", sort: [StrataQuery.SortDescriptor("title")]).compactMap { snapshot -> String? in
            if case .string(let title) = snapshot["title"] { return title }
            return nil
        }
    }

    /// Saves of one insert each are written in a group without a savepoint
    /// of their own (SQLite undoes a failed statement by itself): one that
    /// clashes with a saved row, one that clashes with an earlier save of
    /// its group and one that points to a row that does not exist write
    /// nothing, and every other save of the group commits.
    @Test func oneStatementSavesInAGroupFailAloneWithoutSavepoints() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let holder = try await store.insert("Book", ["title": .string("holder"), "isbn": .string("taken")])
        let gone = ObjectID(storeIdentifier: store.identifier, entityName: "Author", key: .permanent(9_999))
        let saves: [StoreChanges] = [
            StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("a"), "isbn": .string("new")])]),
            StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("b"), "isbn": .string("taken")])]),
            StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("c")])]),
            StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("d"), "author": .object(gone)])]),
            StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("e"), "isbn": .string("new")])]),
            StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("f")])]),
        ]
        let results = try await answersInOneGroup(store, saves)
        for index in [0, 2, 5] {
            guard case .success(.committed)? = results[index] else { Issue.record("save \(index): \(String(describing: results[index]))"); continue }
        }
        for index in [1, 4] {
            guard case .success(.constraintConflicts(let conflicts))? = results[index] else { Issue.record("save \(index): \(String(describing: results[index]))"); continue }
            #expect(conflicts.count == 1)
        }
        guard case .failure(let error as StrataError)? = results[3] else { Issue.record("save 3: \(String(describing: results[3]))"); return }
        #expect(error.code == .objectNotFound)
        let titles = try await bookTitles(store)
        #expect(titles == ["a", "c", "f", "holder"])
        _ = holder
        try await store.close()
    }

    /// In a group, a save of one insert runs no savepoint of its own; a
    /// save that writes with several statements keeps one (SQLite's trace
    /// of the writer's statements tells).
    @Test func onlySavesOfSeveralStatementsRunASavepointInAGroup() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        func tag(_ name: String) -> StoreChanges.Insert {
            .init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string(name)])
        }
        let saves = [StoreChanges(inserts: [tag("a")]), StoreChanges(inserts: [tag("b"), tag("c")]), StoreChanges(inserts: [tag("d")]), StoreChanges(inserts: [tag("e")])]
        let (results, statements) = try await answersInOneGroupTraced(store, saves)
        for index in saves.indices {
            guard case .success(.committed)? = results[index] else { Issue.record("save \(index): \(String(describing: results[index]))"); continue }
        }
        let savepoints = statements.filter { $0.hasPrefix("SAVEPOINT") }
        #expect(savepoints.count == 1, "\(savepoints)")
        #expect(try await store.count(store.resolved("Tag")) == SQLiteInsertPipeline.chunkRows + 10 + 5)
        try await store.close()
    }

    /// When a save without a savepoint fails after its row is written
    /// (here its history row, refused by a trigger), the group is written
    /// again with a savepoint for each save: only that save fails, and the
    /// others keep their own answers.
    @Test func aFailureAfterAOneStatementSaveWroteFailsThatSaveOnly() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        _ = try await store.insert("Book", ["title": .string("holder"), "isbn": .string("taken")])
        let database = try store.openDatabase()
        try await database.writeWithoutTransaction { db in
            try db.execute(sql: """
                CREATE TEMP TRIGGER poisoned_history BEFORE INSERT ON main.\(SQLSchema.quote(SQLiteHistory.transactionTable))
                WHEN NEW.Z_AUTHOR = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned history'); END
                """)
        }
        func book(_ title: String, isbn: String? = nil, author: String) -> StoreChanges {
            var values: [String: PropertyValue] = ["title": .string(title)]
            if let isbn { values["isbn"] = .string(isbn) }
            return StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: values)], author: author)
        }
        let saves = [book("a", author: "a"), book("p", author: "poison"), book("c", isbn: "taken", author: "c"), book("b", author: "b")]
        let results = try await answersInOneGroup(store, saves)
        for index in [0, 3] {
            guard case .success(.committed)? = results[index] else { Issue.record("save \(index): \(String(describing: results[index]))"); continue }
        }
        guard case .success(.constraintConflicts)? = results[2] else { Issue.record("save 2: \(String(describing: results[2]))"); return }
        guard case .failure(let error as StrataError)? = results[1] else { Issue.record("save 1: \(String(describing: results[1]))"); return }
        #expect(error.code == .storeSave)
        #expect(error.message.contains("poisoned history"))
        let titles = try await bookTitles(store)
        #expect(titles == ["a", "b", "holder"])
        // The group written twice recorded each committed save's history
        // once, and the refused save's none; the key table holds the
        // highest key handed out.
        let (authors, recordedKey, highestKey) = try await database.read { db in
            (try String.fetchAll(db, sql: "SELECT Z_AUTHOR FROM \(SQLSchema.quote(SQLiteHistory.transactionTable)) WHERE Z_AUTHOR IS NOT NULL ORDER BY Z_TOKEN"),
             try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'"),
             try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM ZBOOK"))
        }
        #expect(authors.filter { ["a", "b", "c", "poison"].contains($0) } == ["a", "b"])
        // The refused save's token was not kept: no gap.
        let tokens = try await database.read { db in
            try Int64.fetchAll(db, sql: "SELECT Z_TOKEN FROM \(SQLSchema.quote(SQLiteHistory.transactionTable)) ORDER BY Z_TOKEN")
        }
        #expect(zip(tokens, tokens.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(tokens)")
        #expect(highestKey != nil)
        #expect((recordedKey ?? 0) >= (highestKey ?? 1))
        try await store.close()
    }

    /// A group's history is written for the whole group before its
    /// commit, in multi-row statements: each committed save is a history
    /// transaction of its own, with consecutive tokens in the group's order
    /// (past one statement's worth of rows), its author and its inserts;
    /// a save refused in the group records none and leaves no gap.
    @Test func aGroupRecordsEachCommittedSaveAsAHistoryTransactionOfItsOwn() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        _ = try await store.insert("Book", ["title": .string("holder"), "isbn": .string("taken")])
        let before = try await store.history(after: nil, limit: 10_000)
        func book(_ title: String, isbn: String? = nil) -> StoreChanges.Insert {
            var values: [String: PropertyValue] = ["title": .string(title)]
            if let isbn { values["isbn"] = .string(isbn) }
            return .init(temporaryID: .temporary(entityName: "Book"), values: values)
        }
        var saves = (0..<(SQLiteHistory.Recorder.rowsPerStatement + 8)).map { StoreChanges(inserts: [book("t\($0)")], author: "a\($0)") }
        saves.insert(StoreChanges(inserts: [book("pair 1"), book("pair 2")], author: "pair"), at: 5)
        saves.insert(StoreChanges(inserts: [book("refused", isbn: "taken")], author: "refused"), at: 9)
        let (results, written) = try await answersInOneGroupTraced(store, saves)
        // The group written once (no retry), its history in two statements
        // of at most 32 rows for each table: 41 transactions, 42 changes
        // (after the statements of the streamed save that held the writer).
        let historyInserts = written.filter { $0.hasPrefix("INSERT INTO \(SQLSchema.quote(SQLiteHistory.transactionTable)) ") }
        let changeInserts = written.filter { $0.hasPrefix("INSERT INTO \(SQLSchema.quote(SQLiteHistory.changeTable)) ") }
        #expect(written.filter { $0.hasPrefix("SAVEPOINT") }.count == 1)
        #expect(historyInserts.suffix(2).map { $0.components(separatedBy: "), (").count } == [SQLiteHistory.Recorder.rowsPerStatement, 9])
        #expect(changeInserts.suffix(2).map { $0.components(separatedBy: "), (").count } == [SQLiteHistory.Recorder.rowsPerStatement, 10])

        var committed: [(author: String?, ids: [ObjectID])] = []
        for index in saves.indices {
            switch results[index] {
            case .success(.committed(let commit))?: committed.append((saves[index].author, commit.insertedIDs))
            case .success(.constraintConflicts)? where saves[index].author == "refused": break
            default: Issue.record("save \(index): \(String(describing: results[index]))")
            }
        }
        #expect(committed.count == saves.count - 1)
        // After the streamed save that held the writer (no author), the group's.
        let all = try await store.history(after: before.last?.token, limit: 10_000)
        let recorded = all.filter { $0.author != nil }
        #expect(all.count == recorded.count + 1)
        // The streamed save, alone in its group, wrote its rows as they
        // accumulated: every one of them is there.
        #expect(all.first?.changes.count == SQLiteInsertPipeline.chunkRows + 10)
        #expect(recorded.map(\.author) == committed.map(\.author))
        #expect(recorded.map { $0.changes.map(\.objectID) } == committed.map(\.ids))
        #expect(recorded.allSatisfy { $0.changes.allSatisfy { $0.kind == .insert && $0.version == 1 && $0.changedProperties == ["title"] } })
        let tokens = all.map(\.token.value)
        #expect(tokens.first == (before.last?.token.value ?? 0) + 1)
        #expect(zip(tokens, tokens.dropFirst()).allSatisfy { $1 == $0 + 1 })
        // The next save goes on from the group's last token.
        _ = try await store.insert("Book", ["title": .string("after")])
        let next = try await store.history(after: recorded.last?.token, limit: 10)
        #expect(next.map(\.token.value) == [(tokens.last ?? 0) + 1])
        try await store.close()
    }

    /// Once a group's gathered history passes Recorder.flushRows rows, it is
    /// written between two saves, outside both saves' savepoints: the next
    /// save's transaction row goes in a statement of its own, and both
    /// saves' history is whole.
    @Test func aLargeGroupWritesItsHistoryBetweenSaves() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let large = SQLiteHistory.Recorder.flushRows + 88
        let saves = [
            StoreChanges(inserts: (0..<large).map { .init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("large \($0)")]) }, author: "large"),
            StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("small")])], author: "small"),
        ]
        let (results, statements) = try await answersInOneGroupTraced(store, saves)
        for index in saves.indices {
            guard case .success(.committed)? = results[index] else { Issue.record("save \(index): \(String(describing: results[index]))"); continue }
        }
        // The streamed save's row, then one for each save of the group.
        let transactionRows = statements
            .filter { $0.hasPrefix("INSERT INTO \(SQLSchema.quote(SQLiteHistory.transactionTable)) ") }
            .map { $0.components(separatedBy: "), (").count }
        #expect(transactionRows == [1, 1, 1])
        let history = try await store.history(after: nil, limit: 10_000).filter { $0.author != nil }
        #expect(history.map(\.author) == ["large", "small"])
        #expect(history.map(\.changes.count) == [large, 1])
        #expect(history.count == 2 && history[1].token.value == history[0].token.value + 1)
        try await store.close()
    }

    /// History tokens end at Int64.max: the save that would need the next
    /// one fails (134030) instead of trapping, and nothing of it is written.
    @Test func aSaveBeyondTheLastHistoryTokenFailsAndWritesNothing() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        _ = try await store.insert("Book", ["title": .string("first")])
        let database = try store.openDatabase()
        try await database.write { db in
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = ? WHERE name = ?", arguments: [Int64.max - 1, SQLiteHistory.transactionTable])
        }
        _ = try await store.insert("Book", ["title": .string("last")])
        let error = await #expect(throws: StrataError.self) { _ = try await store.insert("Book", ["title": .string("beyond")]) }
        #expect(error?.code == .storeSave)
        #expect(error?.message.contains("no token left") == true)
        #expect(try await bookTitles(store) == ["first", "last"])
        let newest = try await database.read { db in try SQLiteHistory.currentToken(db) }
        #expect(newest == Int64.max)
        try await store.close()
    }

    /// Text is bound from the run's own copy up to the copy limit and
    /// copied by SQLite past it: both read back as written, and an empty
    /// text stays an empty text (not nil), in one save and across saves.
    @Test func textOfEverySizeIsWrittenAsGiven() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        let large = String(repeating: "é", count: SQLiteRunnerBinding.copyLimit)
        let names = ["", "a", large, "b", String(repeating: "x", count: SQLiteRunnerBinding.copyLimit)]
        let changes = StoreChanges(inserts: names.map { .init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string($0)]) })
        guard case .committed = try await store.save(changes) else { Issue.record("not committed"); return }
        _ = try await store.insert("Tag", ["name": .string("")])
        let stored = try await store.fetch("Tag").map { $0["name"] }
        #expect(stored.count == names.count + 1)
        #expect(Set(stored.compactMap { value -> String? in
            if case .string(let text) = value { return text }
            return nil
        }) == Set(names))
        #expect(stored.filter { $0 == .string("") }.count == 2)
        try await store.close()
    }

    /// A save handed over with a completion handler is refused at once by
    /// a read-only or closed store, through the handler.
    @Test func completionSavesAreRefusedAtOnceByReadOnlyAndClosedStores() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await open(directory)
        _ = try await store.insert("Tag", ["name": .string("a")])
        try await store.close()
        let tag = StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("b")])])
        let closed = await withCheckedContinuation { continuation in store.save(tag) { continuation.resume(returning: $0) } }
        guard case .failure(let error as StrataError) = closed else { Issue.record("a closed store took a save: \(closed)"); return }
        #expect(error.code == .storeOpen)

        let readOnly = try await open(directory, readOnly: true)
        let refused = await withCheckedContinuation { continuation in readOnly.save(tag) { continuation.resume(returning: $0) } }
        guard case .failure(let refusal as StrataError) = refused else { Issue.record("a read-only store took a save: \(refused)"); return }
        #expect(refusal.code == .storeSave)
        #expect(try await readOnly.count(readOnly.resolved("Tag")) == 1)
        try await readOnly.close()
    }

    /// Under a steady load (a save always waiting), the log is still
    /// checkpointed between groups once it passes its threshold, so the
    /// next group writes it from its start again instead of growing it.
    @Test func theLogIsCheckpointedBetweenGroupsWhileSavesKeepWaiting() async throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore(
            description: StoreDescription(url: directory.storeURL, type: .sqlite, busyTimeout: .seconds(20), walCheckpointBytes: 1000 * 4096),
            model: Models.library()
        )
        // 1200 rows of about one page each: past the 1000-frame threshold.
        let rows = 1200
        func bigSave(_ byte: UInt8) -> StoreChanges {
            StoreChanges(inserts: (0..<rows).map { _ in
                .init(temporaryID: .temporary(entityName: "Item"), values: ["blob": .binary(Data(repeating: byte, count: 3900))])
            })
        }
        // While another connection holds the lock, the first save's group
        // waits for it and the second save queues behind that group.
        let other = try DatabaseQueue(path: directory.storeURL.path)
        let release = DispatchSemaphore(value: 0)
        let holder = await other.holdWriteLock(seconds: 0, release: release)
        async let first = store.commit(bigSave(1))
        // The first save's group is formed (nothing queued, a commit under way).
        try await waitUntil {
            store.isCommitting && store.queuedSaveCount == 0
        }
        async let second = store.commit(bigSave(2))
        try await waitUntil { store.queuedSaveCount == 1 }
        release.signal()
        try await holder.value
        _ = try await (first, second)

        // One save's frames, not two: the second group wrote the log from
        // its start after the checkpoint that followed the first.
        let walBytes = try FileManager.default.attributesOfItem(atPath: directory.storeURL.path + "-wal")[.size] as? Int ?? 0
        let pageFrame = 4096 + 24
        #expect(walBytes > rows * pageFrame)
        #expect(walBytes < rows * pageFrame * 3 / 2, "log of \(walBytes) bytes: the second group was appended to the first")
        #expect(store.walMonitor.checkpointCount >= 1)
        #expect(try await store.count(store.resolved("Item")) == 2 * rows)
        try await store.close()
        try other.close()
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
