import Foundation
import Testing
import StrataModel
import StrataPostgres
import StrataPostgresTesting
import StrataQuery
@testable import StrataStore
@testable import StrataSQLite

/// The contract of ``PersistentStore``, run on every store kind: the same
/// cases, the same expected results. The in-memory store is the reference
/// the others are compared with (its fetches are ``FetchEvaluator``'s).
@Suite struct StoreConformanceTests {
    typealias F = StoreFixture

    @Test(.enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipComment)))
    func theConformanceSuiteRunsOnPostgreSQL() async throws {
        #expect(StoreKind.allCases.contains(.postgres))
        try await TestDirectory.with { directory in
            let store = try await F.open(.postgres, in: directory)
            #expect(store is PostgresStore)
            try await store.close()
        }
    }

    // MARK: - Attribute values

    @Test(arguments: StoreKind.allCases)
    func everyAttributeTypeRoundTripsExactly(_ kind: StoreKind) async throws {
        let point1 = try #require(Decimal(string: "0.1", locale: Locale(identifier: "en_US_POSIX")))
        let point2 = try #require(Decimal(string: "0.2", locale: Locale(identifier: "en_US_POSIX")))
        let point3 = try #require(Decimal(string: "0.3", locale: Locale(identifier: "en_US_POSIX")))
        let big = try #require(Decimal(string: "12345678901234567890123456789012345678", locale: Locale(identifier: "en_US_POSIX")))
        let negative = try #require(Decimal(string: "-9999999999999999999999999999999999999.9", locale: Locale(identifier: "en_US_POSIX")))
        var rng = SplitMix(seed: 42)
        var blob = [UInt8](repeating: 0, count: 3 << 20)
        for i in blob.indices { blob[i] = UInt8(truncatingIfNeeded: rng.next()) }
        // PostgreSQL's text cannot hold U+0000: its store refuses such
        // strings (checked below) and round-trips every other.
        let text = "Crème brûlée — 日本語 😀 e\u{301} tab\t new\nline " + (kind.holdsNUL ? "\u{0} nul" : "nul")
        let uuid = UUID()

        let first: [String: PropertyValue] = [
            "i16": .integer(Int64(Int16.max)), "i32": .integer(Int64(Int32.min)), "i64": .integer(Int64.max),
            "dec": .decimal(point1 + point2), "dbl": .double(0.1 + 0.2), "flt": .double(0.1),
            "str": .string(text), "flag": .boolean(true), "when": .date(Date(timeIntervalSinceReferenceDate: 786_000_000.123456)),
            "blob": .binary(Data(blob)), "uid": .uuid(uuid), "link": .uri("https://example.com/a%20b?q=ü#frag"),
            "thing": .binary(Data([0, 1, 2, 255])), "code": .string("A"),
        ]
        let second: [String: PropertyValue] = [
            "i16": .integer(Int64(Int16.min)), "i32": .integer(Int64(Int32.max)), "i64": .integer(Int64.min),
            "dec": .decimal(big), "dbl": .double(-Double.greatestFiniteMagnitude), "flt": .double(Double(Float.greatestFiniteMagnitude)),
            "str": .string("x"), "flag": .boolean(false), "when": .date(Date(timeIntervalSinceReferenceDate: -1_000_000.000001)),
            "blob": .binary(Data([7])), "uid": .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))), "link": .uri("file:///tmp/ü"),
            "thing": .binary(Data()), "code": .string("B"),
        ]
        let third: [String: PropertyValue] = ["dec": .decimal(negative), "code": .string("C")]
        let ids = [ObjectID.temporary(entityName: "Sample"), .temporary(entityName: "Sample"), .temporary(entityName: "Sample"), .temporary(entityName: "Sample")]

        try await TestDirectory.with { directory in
            var store = try await F.open(kind, in: directory)
            let commit = try await F.commit(store, StoreChanges(inserts: [
                .init(temporaryID: ids[0], values: first), .init(temporaryID: ids[1], values: second),
                .init(temporaryID: ids[2], values: third), .init(temporaryID: ids[3], values: [:]),
            ]))
            let permanentIDs = commit.permanentIDs
            let permanent = try ids.map { try #require(permanentIDs[$0]) }

            func check(_ store: any PersistentStore) async throws {
                let snapshots = try await store.snapshots(for: permanent)
                try #require(snapshots.count == 4)
                let persisted = Set(F.model.attributes(of: "Sample").filter(\.isPersisted).map(\.name))
                for snapshot in snapshots { #expect(Set(snapshot.values.keys) == persisted) }

                var expected = first
                expected["flt"] = .double(Double(Float(0.1)))
                for (name, value) in expected {
                    #expect(snapshots[0][name] == value, "\(name) of the first sample")
                }
                #expect(snapshots[0]["dec"] == .decimal(point3), "0.1 + 0.2 == 0.3 exactly")
                #expect(snapshots[0]["dbl"] == .double(0.30000000000000004))
                if case .string(let read) = snapshots[0]["str"] {
                    #expect(Array(read.unicodeScalars) == Array(text.unicodeScalars), "the text keeps its exact scalars")
                } else {
                    Issue.record("str is \(snapshots[0]["str"])")
                }
                if case .date(let read) = snapshots[0]["when"] {
                    #expect(read.timeIntervalSinceReferenceDate == 786_000_000.123456)
                }
                for (name, value) in second {
                    #expect(snapshots[1][name] == value, "\(name) of the second sample")
                }
                #expect(snapshots[2]["dec"] == .decimal(negative))
                #expect(snapshots[2]["i16"] == .null)
                #expect(snapshots[3].values.values.allSatisfy { $0.isNull }, "an object inserted without values reads nil everywhere")

                // The values compare exactly in predicates too.
                let exactDecimal = try await store.fetchSnapshots(F.fetch("Sample", "dec == 0.3"))
                #expect(exactDecimal.map(\.objectID) == [permanent[0]])
                let bigDecimal = try await store.fetchObjectIDs(F.fetch("Sample", "dec > 12345678901234567890123456789012345677"))
                #expect(bigDecimal == [permanent[1]])
                let microsecond = try await store.fetchObjectIDs(F.fetch("Sample", "when > CAST(786000000.123455, \"NSDate\")"))
                #expect(microsecond == [permanent[0]])
                let bounds = try await store.fetchObjectIDs(F.fetch("Sample", "i64 == 9223372036854775807 OR i16 == -32768"))
                #expect(bounds == [permanent[0], permanent[1]])
                let byUUID = try await store.fetchObjectIDs(F.fetch("Sample", "uid == $U", variables: ["U": VariableValue.value(.uuid(uuid))]))
                #expect(byUUID == [permanent[0]])
            }

            try await check(store)
            if !kind.holdsNUL {
                await #expect { _ = try await store.save(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Sample"), values: ["str": .string("a\u{0}b")])])) } throws: { error in
                    let error = error as? StrataError
                    return error?.code == .invalidValue && error?.message.contains("Sample.str") == true && error?.message.contains("U+0000") == true
                }
                #expect(try await store.count(F.all("Sample")) == 4, "nothing was written")
            }
            if kind.isPersistent {
                try await store.close()
                store = try await F.open(kind, in: directory)
                try await check(store)
            }
            try await store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func integersOutOfRangeAreRefusedAndNothingIsWritten(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let cases: [(String, Int64, String)] = [
                ("i16", 70000, "Integer 16"), ("i16", -32769, "Integer 16"),
                ("i32", Int64(Int32.max) + 1, "Integer 32"), ("i32", Int64(Int32.min) - 1, "Integer 32"),
            ]
            for (attribute, value, type) in cases {
                let good = StoreChanges.Insert(temporaryID: .temporary(entityName: "Sample"), values: ["i16": .integer(1)])
                let bad = StoreChanges.Insert(temporaryID: .temporary(entityName: "Sample"), values: [attribute: .integer(value)])
                do {
                    let result = try await store.save(StoreChanges(inserts: [good, bad]))
                    Issue.record("\(attribute) = \(value) was accepted: \(result)")
                } catch let error as StrataError {
                    #expect(error.code == .invalidValue)
                    #expect(error.message.contains("Sample.\(attribute)"), "\(error.message)")
                    #expect(error.message.contains("\(value)"), "\(error.message)")
                    #expect(error.message.contains(type), "\(error.message)")
                }
            }
            #expect(try await store.count(F.all("Sample")) == 0)
            try await store.close()
        }
    }

    // MARK: - Fetching

    @Test(arguments: StoreKind.allCases)
    func fetchesSelectSortAndWindowAsSpecified(_ kind: StoreKind) async throws {
        let data = LibraryData.standard
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            try await data.save(into: store)

            func isbns(_ fetch: ResolvedFetch) async throws -> [String?] {
                F.column(try await store.fetchSnapshots(fetch), "isbn")
            }
            func expected(_ indexes: [Int]) -> [String?] { indexes.map { data.books[$0].isbn } }

            // Sorted by title (scalar order, nil first), ties by primary key.
            let byTitle = data.books.indices.sorted { a, b in
                let (ta, tb) = (data.books[a].title, data.books[b].title)
                if ta.map({ [Unicode.Scalar]($0.unicodeScalars) }) == tb.map({ [Unicode.Scalar]($0.unicodeScalars) }) { return a < b }
                return LibraryData.scalarsPrecede(ta, tb)
            }
            #expect(try await isbns(F.fetch("Book", sort: [SortKey("title")])) == expected(byTitle))
            #expect(try await isbns(F.fetch("Book", sort: [SortKey("title", ascending: false)])) == expected(byTitle.reversed().sortedStable(by: data)))

            // Predicate and descending sort.
            let long = data.bookIndexes { ($0.pages ?? 0) > 200 }.sorted { (data.books[$0].pages ?? 0, -$0) > (data.books[$1].pages ?? 0, -$1) }
            #expect(try await isbns(F.fetch("Book", "pages > 200", sort: [SortKey("pages", ascending: false)])) == expected(long))

            // Subentities in or out.
            #expect(try await isbns(F.fetch("Book", subentities: false)) == expected(data.bookIndexes { !$0.isEBook }))
            #expect(try await isbns(F.fetch("EBook")) == expected(data.bookIndexes { $0.isEBook }))
            #expect(try await isbns(F.fetch("Book")) == expected(Array(data.books.indices)))

            // Limit and offset.
            let byISBN = data.books.indices.sorted { data.books[$0].isbn < data.books[$1].isbn }
            #expect(try await isbns(F.fetch("Book", sort: [SortKey("isbn")], limit: 5, offset: 3)) == expected(Array(byISBN[3..<8])))
            #expect(try await store.count(F.fetch("Book", sort: [SortKey("isbn")], limit: 5, offset: 3)) == 5)
            #expect(try await store.count(F.fetch("Book", offset: 20)) == data.books.count - 20)
            #expect(try await isbns(F.fetch("Book", offset: 100)) == [])

            // Through relationships.
            let byAnn = data.bookIndexes { $0.author.map { data.authors[$0].name } == "Ann" }
            #expect(try await isbns(F.fetch("Book", "author.name == 'Ann'")) == expected(byAnn))
            let sf = data.bookIndexes { $0.tags.contains(0) }
            #expect(try await isbns(F.fetch("Book", "ANY tags.name == 'sf'")) == expected(sf))
            let chaptered = data.books.indices.filter { i in data.chapters.filter { $0.book == i }.count >= 2 }
            #expect(try await isbns(F.fetch("Book", "chapters.@count >= 2")) == expected(chaptered))
            let cheap = data.bookIndexes { $0.price.map { $0 >= Decimal(string: "10.5") ?? 0 } ?? false }
            #expect(try await isbns(F.fetch("Book", "price >= 10.5")) == expected(cheap))

            // Descending puts nil last; ties by primary key.
            let ratings = try await store.fetchSnapshots(F.fetch("Author", sort: [SortKey("rating", ascending: false)]))
            let expectedRatings = data.authors.indices.sorted { a, b in
                let (ra, rb) = (data.authors[a].rating ?? -.infinity, data.authors[b].rating ?? -.infinity)
                return ra != rb ? ra > rb : a < b
            }
            #expect(F.column(ratings, "name") == expectedRatings.map { data.authors[$0].name })
            try await store.close()
        }
    }

    /// Every fetch of a broad list gives, on this kind, exactly what the
    /// in-memory store (the evaluator) gives: same objects (same primary
    /// keys), same order, same snapshots, same counts, including through
    /// to-ones left pointing at a deleted object. The PostgreSQL store
    /// refuses (``StrataError/Code/unsupported``) the constructs its
    /// dialect does not compile (LIKE, a Decimal average) and agrees on
    /// the rest.
    @Test(arguments: [StoreKind.sqlite, StoreKind.binary] + StoreKind.allCases.filter { $0 == .postgres })
    func fetchesMatchTheInMemoryStore(_ kind: StoreKind) async throws {
        let data = LibraryData.standard
        let requests: [(String, String?, [SortKey], Int, Int, Bool)] = [
            ("Book", nil, [], 0, 0, true),
            ("Book", nil, [SortKey("title", caseInsensitive: true)], 0, 0, true),
            ("Book", "title BEGINSWITH[cd] 'creme'", [SortKey("title")], 0, 0, true),
            ("Book", "title CONTAINS[c] 'e'", [SortKey("price", ascending: false)], 4, 2, true),
            ("Book", "title LIKE '*a*'", [], 0, 0, true),
            ("Book", "title MATCHES '[A-Z].*'", [SortKey("isbn")], 0, 0, true),
            ("Book", "title == 'Éclair'", [], 0, 0, true),
            ("Book", "title ==[cd] 'eclair'", [], 0, 0, true),
            ("Book", "title IN {'apple', 'Apple', 'x'}", [], 0, 0, true),
            ("Book", "pages BETWEEN {100, 300}", [SortKey("pages")], 0, 0, true),
            ("Book", "pages == nil OR price == nil", [], 0, 0, false),
            ("Book", "price > 20 AND NOT (pages < 50)", [SortKey("price")], 0, 0, true),
            ("Book", "author.rating >= 3", [SortKey("author.name"), SortKey("title")], 0, 0, true),
            ("Book", "author == nil", [], 0, 0, true),
            ("Book", "ALL tags.name != 'sf'", [], 0, 0, true),
            ("Book", "NONE tags.name BEGINSWITH[c] 'p'", [], 0, 0, true),
            ("Book", "SUBQUERY(chapters, $c, $c.number > 0).@count > 0", [], 0, 0, true),
            ("Book", "tags.@count == 2", [SortKey("title", ascending: false)], 0, 0, true),
            ("EBook", "fileSize > 1000", [SortKey("fileSize")], 0, 0, true),
            ("Author", "books.@count > 2", [SortKey("name")], 0, 0, true),
            ("Author", "books.@sum.pages > 500", [], 0, 0, true),
            ("Author", "books.@avg.price < 25", [], 0, 0, true),
            ("Author", "books.@max.pages > 400", [], 0, 0, true),
            ("Author", "ANY favourites.title CONTAINS 'e'", [], 0, 0, true),
            ("Author", "mentor.name ==[c] 'ZOE'", [], 0, 0, true),
            ("Author", "born < CAST(0, \"NSDate\")", [SortKey("born")], 0, 0, true),
            ("Tag", "ANY books.pages > 500", [SortKey("name")], 0, 0, true),
            ("Chapter", "book.title != nil", [SortKey("book.isbn"), SortKey("number", ascending: false)], 0, 0, true),
            ("Shelf", "books.@count > 2", [], 0, 0, true),
            // The first author is deleted: books and the mentee keep pointing at it.
            ("Book", "author == nil", [], 0, 0, true),
            ("Book", "author.name == nil", [SortKey("author.name"), SortKey("isbn")], 0, 0, true),
            ("Book", "author.books.@count > 0", [], 0, 0, true),
            ("Author", "mentor == nil", [], 0, 0, true),
            ("Author", "mentor.name == nil", [SortKey("mentor.rating", ascending: false)], 0, 0, true),
        ]
        try await TestDirectory.with { directory in
            let reference = try await F.open(.inMemory, in: directory)
            let store = try await F.open(kind, in: directory)
            for target in [reference, store] {
                let saved = try await data.save(into: target)
                try await F.commit(target, StoreChanges(deletes: [.init(objectID: saved.authors[0], expectedVersion: 1)]))
            }
            for (entity, format, sort, limit, offset, subentities) in requests {
                let fetch = try F.fetch(entity, format, sort: sort, limit: limit, offset: offset, subentities: subentities)
                let label = "\(entity) \(format ?? "all") sorted by \(sort.map(\.keyPath)) limit \(limit) offset \(offset)"
                let expected = try await reference.fetchSnapshots(fetch).map(F.portable)
                let actual = try await store.fetchSnapshots(fetch).map(F.portable)
                #expect(actual == expected, "\(label)")
                #expect(try await store.fetchObjectIDs(fetch).map(F.portable) == expected.map(\.objectID), "\(label)")
                #expect(try await store.count(fetch) == expected.count, "\(label)")
            }
            try await reference.close()
            try await store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func objectIDsCountsAndSnapshotsAgree(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let saved = try await LibraryData.standard.save(into: store)
            for fetch in [try F.fetch("Book", sort: [SortKey("title")], limit: 7, offset: 2), try F.fetch("Author"), try F.fetch("EBook")] {
                let snapshots = try await store.fetchSnapshots(fetch)
                let ids = try await store.fetchObjectIDs(fetch)
                #expect(ids == snapshots.map(\.objectID))
                #expect(try await store.count(fetch) == ids.count)
                #expect(try await store.snapshots(for: ids.reversed()) == snapshots.reversed())
                for id in ids {
                    #expect(id.storeIdentifier == store.identifier)
                    #expect(!id.isTemporary)
                }
            }
            // Missing objects are left out; an ancestor's name finds the object.
            let ebook = try #require(saved.books.first { $0.entityName == "EBook" })
            let asBook = ObjectID(storeIdentifier: store.identifier, entityName: "Book", key: ebook.key)
            let missing = ObjectID(storeIdentifier: store.identifier, entityName: "Book", key: .permanent(9999))
            let found = try await store.snapshots(for: [missing, .temporary(entityName: "Book"), asBook, saved.books[0]])
            #expect(found.map(\.objectID) == [ebook, saved.books[0]])
            #expect(store.entityNames == Set(F.model.entities.map(\.name)))
            try await store.close()
        }
    }

    // MARK: - Relationships

    @Test(arguments: StoreKind.allCases)
    func relationshipsOfEveryKindAreStoredOnceAndKeepTheirOrder(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let a = (0..<2).map { _ in ObjectID.temporary(entityName: "Author") }
            let b = [ObjectID.temporary(entityName: "Book"), .temporary(entityName: "Book"), .temporary(entityName: "Book"), .temporary(entityName: "EBook")]
            let t = (0..<2).map { _ in ObjectID.temporary(entityName: "Tag") }
            let c = (0..<3).map { _ in ObjectID.temporary(entityName: "Chapter") }
            let shelf = ObjectID.temporary(entityName: "Shelf")
            var inserts: [StoreChanges.Insert] = [
                .init(temporaryID: a[0], values: ["name": .string("A0")], toMany: ["books": [b[0], b[1], b[3]], "favourites": [b[2], b[0]]]),
                .init(temporaryID: a[1], values: ["name": .string("A1"), "mentor": .object(a[0])]),
            ]
            for (i, id) in b.enumerated() {
                var values: [String: PropertyValue] = ["isbn": .string("B\(i)")]
                if i == 2 { values["author"] = .object(a[1]) }
                inserts.append(.init(temporaryID: id, values: values, toMany: i == 0 ? ["tags": [t[0], t[1]], "chapters": [c[2], c[0], c[1]]] : [:]))
            }
            inserts.append(.init(temporaryID: t[0], values: ["name": .string("t0")]))
            inserts.append(.init(temporaryID: t[1], values: ["name": .string("t1")], toMany: ["books": [b[0], b[2]]]))
            for (i, id) in c.enumerated() { inserts.append(.init(temporaryID: id, values: ["number": .integer(Int64(i))])) }
            inserts.append(.init(temporaryID: shelf, values: ["name": .string("S")], toMany: ["books": [b[2], b[0], b[3]]]))
            let commit = try await F.commit(store, StoreChanges(inserts: inserts))
            let permanentIDs = commit.permanentIDs
            func p(_ id: ObjectID) throws -> ObjectID { try #require(permanentIDs[id]) }
            let (A, B, T, C, S) = (try a.map(p), try b.map(p), try t.map(p), try c.map(p), try p(shelf))

            // One-to-many, from either side; the inverse to-one is in the snapshot.
            #expect(try await store.destinations(of: "books", for: A[0]) == [B[0], B[1], B[3]])
            #expect(try await store.destinations(of: "books", for: A[1]) == [B[2]])
            #expect(try await F.snapshot(store, B[0])["author"] == .object(A[0]))
            #expect(try await F.snapshot(store, B[3])["author"] == .object(A[0]))
            #expect(try await F.snapshot(store, B[2])["author"] == .object(A[1]))
            // Many-to-many: both sides read the same links.
            #expect(try await store.destinations(of: "tags", for: B[0]) == [T[0], T[1]])
            #expect(try await store.destinations(of: "tags", for: B[2]) == [T[1]])
            #expect(try await store.destinations(of: "books", for: T[1]) == [B[0], B[2]])
            #expect(try await store.destinations(of: "books", for: T[0]) == [B[0]])
            // Ordered one-to-many keeps the given order, not the key order.
            #expect(try await store.destinations(of: "chapters", for: B[0]) == [C[2], C[0], C[1]])
            #expect(try await F.snapshot(store, C[1])["book"] == .object(B[0]))
            // Ordered to-many without inverse; unordered without inverse (by key); to-one without inverse.
            #expect(try await store.destinations(of: "books", for: S) == [B[2], B[0], B[3]])
            #expect(try await store.destinations(of: "favourites", for: A[0]) == [B[0], B[2]])
            #expect(try await F.snapshot(store, A[1])["mentor"] == .object(A[0]))
            #expect(try await F.snapshot(store, A[0])["mentor"] == .null)
            #expect(try await store.destinations(of: "books", for: A[0]).contains { $0.entityName == "EBook" })

            // Move, reorder, unlink — both sides sent, as a context does.
            try await F.commit(store, StoreChanges(updates: [
                .init(objectID: A[0], expectedVersion: 1, values: [:], toMany: ["books": [B[0], B[3]]]),
                .init(objectID: A[1], expectedVersion: 1, values: [:], toMany: ["books": [B[2], B[1]]]),
                .init(objectID: B[1], expectedVersion: 1, values: ["author": .object(A[1])]),
                .init(objectID: B[0], expectedVersion: 1, values: [:], toMany: ["chapters": [C[1], C[2]], "tags": [T[1]]]),
                .init(objectID: C[0], expectedVersion: 1, values: ["book": .null]),
                .init(objectID: T[0], expectedVersion: 1, values: [:], toMany: ["books": []]),
                .init(objectID: S, expectedVersion: 1, values: [:], toMany: ["books": [B[3], B[2]]]),
            ]))
            #expect(try await store.destinations(of: "books", for: A[0]) == [B[0], B[3]])
            #expect(try await store.destinations(of: "books", for: A[1]) == [B[1], B[2]])
            #expect(try await F.snapshot(store, B[1])["author"] == .object(A[1]))
            #expect(try await store.destinations(of: "chapters", for: B[0]) == [C[1], C[2]])
            #expect(try await F.snapshot(store, C[0])["book"] == .null)
            #expect(try await store.destinations(of: "tags", for: B[0]) == [T[1]])
            #expect(try await store.destinations(of: "books", for: T[0]) == [])
            #expect(try await store.destinations(of: "books", for: S) == [B[3], B[2]])

            // Deleting removes the object from every list that held it.
            try await F.commit(store, StoreChanges(deletes: [.init(objectID: C[2], expectedVersion: 1), .init(objectID: B[2], expectedVersion: 1)]))
            #expect(try await store.destinations(of: "chapters", for: B[0]) == [C[1]])
            #expect(try await store.destinations(of: "books", for: S) == [B[3]])
            #expect(try await store.destinations(of: "books", for: T[1]) == [B[0]])
            #expect(try await store.destinations(of: "favourites", for: A[0]) == [B[0]])
            #expect(try await store.destinations(of: "books", for: A[1]) == [B[1]])
            #expect(try await store.fetchObjectIDs(F.fetch("Book", "ANY tags.name == 't1'")) == [B[0]])
            #expect(try await store.fetchObjectIDs(F.fetch("Author", "books.@count == 1")) == [A[1]])
            try await store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func insertsReferToEachOtherByTemporaryIDs(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let author = ObjectID.temporary(entityName: "Author")
            let books = [ObjectID.temporary(entityName: "Book"), .temporary(entityName: "EBook")]
            let chapter = ObjectID.temporary(entityName: "Chapter")
            let commit = try await F.commit(store, StoreChanges(inserts: [
                .init(temporaryID: chapter, values: ["book": .object(books[1])]),
                .init(temporaryID: books[0], values: ["author": .object(author), "isbn": .string("1")]),
                .init(temporaryID: books[1], values: ["author": .object(author), "isbn": .string("2")], toMany: ["chapters": [chapter]]),
                .init(temporaryID: author, values: ["mentor": .object(author)], toMany: ["books": books, "favourites": [books[1]]]),
            ]))
            #expect(Set(commit.permanentIDs.keys) == Set([author, chapter] + books))
            let permanent = commit.permanentIDs
            for (temporary, id) in permanent {
                #expect(id.entityName == temporary.entityName)
                #expect(id.storeIdentifier == store.identifier)
                #expect(!id.isTemporary)
                #expect(commit.versions[id] == 1)
            }
            let snapshots = try await store.snapshots(for: Array(permanent.values))
            #expect(snapshots.count == 4)
            for snapshot in snapshots {
                for value in snapshot.values.values {
                    if case .object(let id) = value { #expect(!id.isTemporary && id.storeIdentifier == store.identifier) }
                }
            }
            let authorID = try #require(permanent[author])
            #expect(try await F.snapshot(store, authorID)["mentor"] == .object(authorID))
            #expect(try await store.destinations(of: "books", for: authorID) == books.compactMap { permanent[$0] })
            #expect(try await store.destinations(of: "favourites", for: authorID) == [try #require(permanent[books[1]])])
            #expect(try await store.destinations(of: "chapters", for: try #require(permanent[books[1]])) == [try #require(permanent[chapter])])
            try await store.close()
        }
    }

    /// More inserts than the SQLite store encodes before its transaction
    /// (2048), so that their rows are encoded in chunks while earlier
    /// chunks are written: references between rows of different chunks,
    /// rows of two entities of one table interleaved, foreign keys set by
    /// a to-many saved after its destinations; then a value that does not
    /// fit and a uniqueness clash in a save's last rows, which write nothing.
    @Test(arguments: StoreKind.allCases)
    func largeSavesWriteEveryRowAndStayAllOrNothing(_ kind: StoreKind) async throws {
        let count = 5000
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let author = ObjectID.temporary(entityName: "Author")
            let chapter = ObjectID.temporary(entityName: "Chapter")
            let bookIDs = (0..<count).map { ObjectID.temporary(entityName: $0 % 3 == 0 ? "EBook" : "Book") }
            func values(ofBook i: Int) -> [String: PropertyValue] {
                var values: [String: PropertyValue] = ["title": .string("b\(i)"), "isbn": .string("isbn-\(i)"), "pages": .integer(Int64(i)), "price": .decimal(Decimal(i) / 100)]
                if i % 3 == 0 { values["fileSize"] = .integer(Int64(i) * 1000) }
                return values
            }
            var inserts: [StoreChanges.Insert] = [.init(temporaryID: chapter, values: ["title": .string("first"), "book": .object(bookIDs[count - 1])])]
            for (i, id) in bookIDs.enumerated() { inserts.append(.init(temporaryID: id, values: values(ofBook: i))) }
            inserts.append(.init(temporaryID: author, values: ["name": .string("A")], toMany: ["books": bookIDs]))

            let permanent = try await F.commit(store, StoreChanges(inserts: inserts)).permanentIDs
            #expect(permanent.count == count + 2)
            #expect(try await store.count(F.all("Book")) == count)
            let authorID = try #require(permanent[author])
            #expect(try await store.destinations(of: "books", for: authorID) == bookIDs.compactMap { permanent[$0] })
            #expect(try await F.snapshot(store, try #require(permanent[chapter]))["book"] == .object(try #require(permanent[bookIDs[count - 1]])))
            for i in [0, 1, 1023, 1024, 2047, 2048, 3001, count - 1] {
                let id = try #require(permanent[bookIDs[i]])
                let snapshot = try await F.snapshot(store, id)
                #expect(snapshot.objectID.entityName == (i % 3 == 0 ? "EBook" : "Book"))
                for (key, value) in values(ofBook: i) { #expect(snapshot[key] == value, "\(key) of book \(i)") }
                #expect(snapshot["author"] == .object(authorID))
            }

            // A value that does not fit, near the end of a large save.
            var bad = (0..<count).map { i in StoreChanges.Insert(temporaryID: .temporary(entityName: "Chapter"), values: ["number": .integer(Int64(i % 1000))]) }
            bad[count - 10] = .init(temporaryID: .temporary(entityName: "Chapter"), values: ["number": .integer(70000)])
            do {
                _ = try await store.save(StoreChanges(inserts: bad))
                Issue.record("a save with an Integer 16 of 70000 was accepted")
            } catch let error as StrataError {
                #expect(error.code == .invalidValue)
                #expect(error.message.contains("Chapter.number"), "\(error)")
            }
            #expect(try await store.count(F.all("Chapter")) == 1)

            // A uniqueness clash near the end of a large save.
            let clashing = (0..<count).map { i in
                StoreChanges.Insert(temporaryID: .temporary(entityName: "Book"), values: ["isbn": .string(i == count - 5 ? "isbn-7" : "new-\(i)")])
            }
            let result = try await store.save(StoreChanges(inserts: clashing))
            guard case .constraintConflicts(let conflicts) = result else {
                Issue.record("expected a uniqueness conflict, got \(result)")
                return
            }
            #expect(conflicts.map(\.existingObjectID) == [permanent[bookIDs[7]]])
            #expect(try await store.count(F.all("Book")) == count)
            try await store.close()
        }
    }

    /// One temporary ID twice in a save is refused and writes nothing,
    /// whether the IDs come from this process in order, out of order, or
    /// from elsewhere (any UUID).
    @Test(arguments: StoreKind.allCases)
    func anObjectInsertedTwiceInOneSaveIsRefused(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let made = (0..<3000).map { _ in ObjectID.temporary(entityName: "Tag") }
            let foreign = (0..<3).map { _ in ObjectID(storeIdentifier: "", entityName: "Tag", key: .temporary(UUID())) }
            let cases: [[ObjectID]] = [
                made + [made[5]],
                [made[2], made[1], made[2]],
                foreign + [foreign[0]],
            ]
            for ids in cases {
                do {
                    _ = try await store.save(StoreChanges(inserts: ids.map { .init(temporaryID: $0, values: ["name": .string("t")]) }))
                    Issue.record("\(ids.count) inserts with one ID twice were accepted")
                } catch let error as StrataError {
                    #expect(error.code == .invalidValue, "\(error)")
                }
                #expect(try await store.count(F.all("Tag")) == 0)
            }
            // Distinct IDs, in order, out of order and from elsewhere, are fine.
            let commit = try await F.commit(store, StoreChanges(inserts: (Array(made.reversed()) + foreign).map { .init(temporaryID: $0, values: ["name": .string("t")]) }))
            #expect(commit.permanentIDs.count == 3003)
            try await store.close()
        }
    }

    // MARK: - Versions and conflicts

    @Test(arguments: StoreKind.allCases)
    func versionsStartAtOneAndGrowByOne(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let temporary = ObjectID.temporary(entityName: "Book")
            let inserted = try await F.commit(store, StoreChanges(inserts: [.init(temporaryID: temporary, values: ["title": .string("v1")])]))
            let id = try #require(inserted.permanentIDs[temporary])
            #expect(inserted.versions == [id: 1])
            #expect(try await F.snapshot(store, id).version == 1)
            for version in Int64(2)...4 {
                let commit = try await F.commit(store, StoreChanges(updates: [.init(objectID: id, expectedVersion: version - 1, values: ["title": .string("v\(version)")])]))
                #expect(commit.versions == [id: version])
                let snapshot = try await F.snapshot(store, id)
                #expect(snapshot.version == version)
                #expect(snapshot["title"] == .string("v\(version)"))
            }
            try await store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func staleUpdatesConflictAndNothingIsWritten(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let temporaries = [ObjectID.temporary(entityName: "Book"), .temporary(entityName: "Book")]
            let inserted = try await F.commit(store, StoreChanges(inserts: temporaries.map { .init(temporaryID: $0, values: ["title": .string("v1")]) }))
            let x = try #require(inserted.permanentIDs[temporaries[0]])
            let z = try #require(inserted.permanentIDs[temporaries[1]])
            try await F.commit(store, StoreChanges(updates: [.init(objectID: x, expectedVersion: 1, values: ["title": .string("v2")])]))
            let current = try await F.snapshot(store, x)

            let result = try await store.save(StoreChanges(
                inserts: [.init(temporaryID: .temporary(entityName: "Book"), values: ["title": .string("new")])],
                updates: [
                    .init(objectID: z, expectedVersion: 1, values: ["title": .string("fine")]),
                    .init(objectID: x, expectedVersion: 1, values: ["title": .string("stale")]),
                ]
            ))
            guard case .conflicts(let conflicts) = result else {
                Issue.record("expected conflicts, got \(result)")
                return
            }
            #expect(conflicts == [StoreConflict(objectID: x, expectedVersion: 1, currentVersion: 2, currentSnapshot: current)])
            #expect(try await store.count(F.all("Book")) == 2, "the insert was not written")
            #expect(try await F.snapshot(store, z) == Snapshot(objectID: z, version: 1, values: ["title": .string("v1"), "isbn": .null, "pages": .null, "price": .null, "author": .null]))
            #expect(try await F.snapshot(store, x) == current)

            // Without version checks the same update goes through.
            let forced = try await F.commit(store, StoreChanges(updates: [.init(objectID: x, expectedVersion: 1, values: ["title": .string("forced")])], checksVersions: false))
            #expect(forced.versions[x] == 3)
            #expect(try await F.snapshot(store, x)["title"] == .string("forced"))
            try await store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func changesToObjectsDeletedMeanwhileConflictWithVersionZero(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let temporaries = [ObjectID.temporary(entityName: "Tag"), .temporary(entityName: "Tag")]
            let inserted = try await F.commit(store, StoreChanges(inserts: temporaries.map { .init(temporaryID: $0, values: ["name": .string("t")]) }))
            let gone = try #require(inserted.permanentIDs[temporaries[0]])
            let kept = try #require(inserted.permanentIDs[temporaries[1]])
            try await F.commit(store, StoreChanges(deletes: [.init(objectID: gone, expectedVersion: 1)]))
            #expect(try await store.snapshots(for: [gone]).isEmpty)

            let update = try await store.save(StoreChanges(updates: [
                .init(objectID: kept, expectedVersion: 1, values: ["name": .string("changed")]),
                .init(objectID: gone, expectedVersion: 1, values: ["name": .string("x")]),
            ]))
            #expect(update == .conflicts([StoreConflict(objectID: gone, expectedVersion: 1, currentVersion: 0, currentSnapshot: nil)]))
            let delete = try await store.save(StoreChanges(deletes: [.init(objectID: gone, expectedVersion: 1)]))
            #expect(delete == .conflicts([StoreConflict(objectID: gone, expectedVersion: 1, currentVersion: 0, currentSnapshot: nil)]))
            #expect(try await F.snapshot(store, kept)["name"] == .string("t"), "nothing was written")
            #expect(try await F.snapshot(store, kept).version == 1)
            try await store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func uniquenessConstraintsAreEnforcedAcrossTheHierarchy(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let first = ObjectID.temporary(entityName: "Book")
            let other = ObjectID.temporary(entityName: "Book")
            let saved = try await F.commit(store, StoreChanges(inserts: [
                .init(temporaryID: first, values: ["isbn": .string("I-1")]),
                .init(temporaryID: other, values: ["isbn": .string("I-0")]),
            ]))
            let firstID = try #require(saved.permanentIDs[first])
            let otherID = try #require(saved.permanentIDs[other])

            // Against a saved object, from the entity and from a subentity.
            for entity in ["Book", "EBook"] {
                let clash = ObjectID.temporary(entityName: entity)
                let result = try await store.save(StoreChanges(inserts: [
                    .init(temporaryID: .temporary(entityName: "Book"), values: ["isbn": .string("fresh")]),
                    .init(temporaryID: clash, values: ["isbn": .string("I-1")]),
                ]))
                #expect(result == .constraintConflicts([ConstraintConflict(entityName: "Book", constraint: ["isbn"], values: ["isbn": .string("I-1")], objectID: clash, existingObjectID: firstID)]), "\(entity)")
            }
            #expect(try await store.count(F.all("Book")) == 2, "nothing was written")

            // Between two inserts of one save.
            let twins = [ObjectID.temporary(entityName: "Book"), .temporary(entityName: "EBook")]
            let between = try await store.save(StoreChanges(inserts: twins.map { .init(temporaryID: $0, values: ["isbn": .string("I-2")]) }))
            if case .constraintConflicts(let conflicts) = between {
                #expect(!conflicts.isEmpty)
                for conflict in conflicts {
                    #expect(twins.contains(conflict.objectID))
                    #expect(conflict.existingObjectID == nil)
                    #expect(conflict.values == ["isbn": .string("I-2")])
                }
            } else {
                Issue.record("expected constraint conflicts, got \(between)")
            }

            // An update onto a taken value; an update keeping its own value is fine.
            let update = try await store.save(StoreChanges(updates: [.init(objectID: otherID, expectedVersion: 1, values: ["isbn": .string("I-1")])]))
            #expect(update == .constraintConflicts([ConstraintConflict(entityName: "Book", constraint: ["isbn"], values: ["isbn": .string("I-1")], objectID: otherID, existingObjectID: firstID)]))
            try await F.commit(store, StoreChanges(updates: [.init(objectID: firstID, expectedVersion: 1, values: ["isbn": .string("I-1"), "title": .string("same")])]))

            // Nil never clashes; strings compare exactly (no Unicode folding).
            try await F.commit(store, StoreChanges(inserts: [
                .init(temporaryID: .temporary(entityName: "Book"), values: [:]),
                .init(temporaryID: .temporary(entityName: "Book"), values: [:]),
                .init(temporaryID: .temporary(entityName: "Book"), values: ["isbn": .string("\u{e9}")]),
                .init(temporaryID: .temporary(entityName: "Book"), values: ["isbn": .string("e\u{301}")]),
                .init(temporaryID: .temporary(entityName: "Sample"), values: ["code": .string("I-1")]),
            ]))
            #expect(try await store.count(F.all("Book")) == 6)
            try await store.close()
        }
    }

    // MARK: - Configurations

    @Test(arguments: StoreKind.allCases)
    func aConfigurationStoreHoldsItsEntitiesAndRefusesLinksToOtherStores(_ kind: StoreKind) async throws {
        let model = ObjectModel(name: "StoreFixture", entities: F.model.entities, configurations: [
            ConfigurationDescription(name: "Books", entities: ["Book", "Tag", "Chapter"]),
            ConfigurationDescription(name: "People", entities: ["Author", "Shelf", "Sample"]),
        ])
        try await TestDirectory.with { directory in
            func description(_ configuration: String) -> StoreDescription {
                StoreDescription(url: kind.url(in: directory, name: configuration), type: kind.storeType, configuration: configuration)
            }
            let books = try await F.factory.open(description("Books"), model: model)
            let people = try await F.factory.open(description("People"), model: model)
            #expect(books.entityNames == ["Book", "EBook", "Tag", "Chapter"])
            #expect(people.entityNames == ["Author", "Shelf", "Sample"])
            #expect(books.identifier != people.identifier)

            let author = ObjectID.temporary(entityName: "Author")
            let authorID = try #require(try await F.commit(people, StoreChanges(inserts: [.init(temporaryID: author, values: ["name": .string("A")])])).permanentIDs[author])
            let tag = ObjectID.temporary(entityName: "Tag")
            do {
                let result = try await books.save(StoreChanges(inserts: [
                    .init(temporaryID: tag, values: ["name": .string("t")]),
                    .init(temporaryID: .temporary(entityName: "Book"), values: ["author": .object(authorID)], toMany: ["tags": [tag]]),
                ]))
                Issue.record("a relationship across stores was saved: \(result)")
            } catch let error as StrataError {
                #expect(error.code == .externalRelationship, "\(error)")
            }
            #expect(try await books.count(F.all("Tag")) == 0, "nothing was written")
            await #expect(throws: StrataError.self) {
                _ = try await books.save(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Author"), values: [:])]))
            }
            await #expect(throws: StrataError.self) { _ = try await books.fetchObjectIDs(F.all("Author")) }
            try await F.commit(books, StoreChanges(inserts: [
                .init(temporaryID: tag, values: ["name": .string("t")]),
                .init(temporaryID: .temporary(entityName: "EBook"), values: ["isbn": .string("1")], toMany: ["tags": [tag]]),
            ]))
            #expect(try await books.count(F.fetch("Book", "ANY tags.name == 't'")) == 1)
            try await books.close()
            try await people.close()
        }
    }

    // MARK: - Read-only, reopen, close

    @Test(arguments: StoreKind.allCases)
    func readOnlyStoresRefuseSavesAndLeaveTheirDataAlone(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            var ids: [ObjectID] = []
            if kind.isPersistent {
                let writer = try await F.open(kind, in: directory)
                ids = try await LibraryData.standard.save(into: writer).books
                try await writer.close()
            }
            let fileURL = kind.isFile ? kind.url(in: directory) : nil
            let before = try fileURL.map { try Data(contentsOf: $0) }
            let store = try await F.open(kind, in: directory, readOnly: true)
            #expect(store.isReadOnly)
            let snapshots = try await store.fetchSnapshots(F.all("Book"))
            #expect(snapshots.map(\.objectID) == ids)
            let attempts = [
                StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: [:])]),
                StoreChanges(updates: ids.prefix(1).map { .init(objectID: $0, expectedVersion: 1, values: ["title": .string("x")]) }),
                StoreChanges(deletes: ids.prefix(1).map { .init(objectID: $0, expectedVersion: 1) }),
            ]
            for changes in attempts {
                await #expect { _ = try await store.save(changes) } throws: { error in
                    (error as? StrataError)?.code == .storeSave
                }
            }
            #expect(try await store.fetchSnapshots(F.all("Book")) == snapshots)
            try await store.close()
            if let fileURL {
                #expect(try Data(contentsOf: fileURL) == before, "the file's bytes are unchanged")
            }
        }
    }

    @Test(arguments: StoreKind.allCases.filter(\.isPersistent))
    func reopeningKeepsTheIdentifierTheDataAndThePrimaryKeys(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let identifier = store.identifier
            let saved = try await LibraryData.standard.save(into: store)
            try await F.commit(store, StoreChanges(
                updates: [.init(objectID: saved.books[0], expectedVersion: 1, values: ["title": .string("changed")], toMany: ["tags": [saved.tags[4]]])],
                deletes: [.init(objectID: try #require(saved.books.last), expectedVersion: 1)]
            ))
            var snapshots: [String: [Snapshot]] = [:]
            for entity in ["Author", "Book", "Tag", "Chapter", "Shelf"] {
                snapshots[entity] = try await store.fetchSnapshots(F.all(entity))
            }
            let chapters = try await store.destinations(of: "chapters", for: saved.books[0])
            try await store.close()

            let reopened = try await F.open(kind, in: directory)
            #expect(reopened.identifier == identifier)
            for entity in ["Author", "Book", "Tag", "Chapter", "Shelf"] {
                #expect(try await reopened.fetchSnapshots(F.all(entity)) == snapshots[entity], "\(entity)")
            }
            #expect(try await F.snapshot(reopened, saved.books[0]).version == 2)
            #expect(try await reopened.destinations(of: "chapters", for: saved.books[0]) == chapters)
            #expect(try await reopened.destinations(of: "tags", for: saved.books[0]) == [saved.tags[4]])

            // The deleted newest key is not handed out again.
            let temporary = ObjectID.temporary(entityName: "Book")
            let commit = try await F.commit(reopened, StoreChanges(inserts: [.init(temporaryID: temporary, values: [:])]))
            let lastKey = try #require(saved.books.last?.primaryKey)
            #expect(try #require(commit.permanentIDs[temporary]?.primaryKey) > lastKey)
            try await reopened.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aClosedStoreRefusesCalls(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            try await store.close()
            await #expect(throws: StrataError.self) { _ = try await store.fetchObjectIDs(F.all("Book")) }
            await #expect(throws: StrataError.self) { _ = try await store.save(StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: [:])])) }
        }
    }
}

private extension Array where Element == Int {
    /// Reversed index lists of a title sort: equal titles keep primary-key
    /// order (ties break by key ascending in both directions).
    func sortedStable(by data: LibraryData) -> [Int] {
        var result: [Int] = []
        var i = startIndex
        while i < endIndex {
            var j = i
            let title = data.books[self[i]].title.map { [Unicode.Scalar]($0.unicodeScalars) }
            while j < endIndex, data.books[self[j]].title.map({ [Unicode.Scalar]($0.unicodeScalars) }) == title { j += 1 }
            result += self[i..<j].sorted()
            i = j
        }
        return result
    }
}
