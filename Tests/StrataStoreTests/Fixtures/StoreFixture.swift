import Foundation
import Testing
import StrataModel
import StrataPostgres
import StrataPostgresTesting
import StrataQuery
@testable import StrataStore
@testable import StrataSQLite

// The model every store test uses, built in Swift:
//
//   Sample   i16 i32 i64 dec dbl flt str flag when blob uid link thing code(unique) note(transient)
//            — one attribute of every type, all optional
//   Author   name born rating   books ⇄ Book.author (one-to-many)
//            mentor → Author (to-one, no inverse)   favourites → Book (to-many, no inverse)
//   Book     title isbn(unique) pages price   author ⇄   tags ⇄⇄ Tag.books (many-to-many)
//            chapters ⇄ Chapter.book (ordered one-to-many)
//   EBook : Book   fileSize
//   Tag      name   books
//   Chapter  title number   book
//   Shelf    name   books → Book (ordered to-many, no inverse)

/// The fetch sort descriptor (Foundation has a type of the same name).
typealias SortKey = StrataQuery.SortDescriptor

/// The store kinds every conformance case runs on: PostgreSQL's where a
/// server is configured (``PostgresTestServer``; always under CI, and
/// ``StoreConformanceTests/theConformanceSuiteRunsOnPostgreSQL()`` is
/// skipped with the reason where it is not).
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case inMemory
    case binary
    case postgres

    static var allCases: [StoreKind] {
        [.sqlite, .inMemory, .binary] + (PostgresTestServer.isEnabled ? [.postgres] : [])
    }

    /// The description's store type.
    var storeType: StoreDescription.StoreType {
        switch self {
        case .sqlite: .sqlite
        case .inMemory: .inMemory
        case .binary: .binary
        case .postgres: .postgres
        }
    }

    /// Whether the store keeps its data (and can be reopened).
    var isPersistent: Bool { self != .inMemory }

    /// Whether the store's data is one file.
    var isFile: Bool { self == .sqlite || self == .binary }

    /// Whether strings may hold U+0000 (PostgreSQL's text cannot).
    var holdsNUL: Bool { self != .postgres }

    /// The store file in `directory` (nil in memory); for PostgreSQL, a
    /// schema of the test server named after `directory` (and `name`).
    func url(in directory: URL, name: String = "store") -> URL? {
        switch self {
        case .sqlite: directory.appendingPathComponent("\(name).sqlite")
        case .inMemory: nil
        case .binary: directory.appendingPathComponent("\(name).strata")
        case .postgres:
            PostgresTestServer.url.flatMap { base in
                let schema = PostgresTestServer.schemaName("st", seed: directory.path + "/" + name)
                return URL(string: base + (base.contains("?") ? "&" : "?") + "schema=" + schema)
            }
        }
    }

    /// A description of a store of this kind in `directory`.
    func description(in directory: URL, name: String = "store", readOnly: Bool = false) -> StoreDescription {
        StoreDescription(url: url(in: directory, name: name), type: storeType, isReadOnly: readOnly)
    }

    var testDescription: String { rawValue }
}

/// A fresh temporary directory per test, removed afterwards.
enum TestDirectory {
    /// Runs `body` with a new empty directory.
    static func with<T>(_ body: (URL) async throws -> T) async throws -> T {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-store-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try await body(url)
    }
}

/// The fixture model and helpers.
enum StoreFixture {
    static let model: ObjectModel = {
        func optional(_ name: String, _ type: AttributeType) -> AttributeDescription {
            AttributeDescription(name: name, type: type, isOptional: true)
        }
        let sample = EntityDescription(
            name: "Sample",
            attributes: [
                optional("i16", .integer16), optional("i32", .integer32), optional("i64", .integer64),
                optional("dec", .decimal), optional("dbl", .double), optional("flt", .float),
                optional("str", .string), optional("flag", .boolean), optional("when", .date),
                optional("blob", .binary), optional("uid", .uuid), optional("link", .uri),
                optional("thing", .transformable), optional("code", .string),
                AttributeDescription(name: "note", type: .string, isOptional: true, isTransient: true),
            ],
            uniquenessConstraints: [["code"]]
        )
        let author = EntityDescription(
            name: "Author",
            attributes: [optional("name", .string), optional("born", .date), optional("rating", .double)],
            relationships: [
                RelationshipDescription(name: "books", destination: "Book", inverse: "author", toMany: true),
                RelationshipDescription(name: "mentor", destination: "Author"),
                RelationshipDescription(name: "favourites", destination: "Book", toMany: true),
            ]
        )
        let book = EntityDescription(
            name: "Book",
            attributes: [optional("title", .string), optional("isbn", .string), optional("pages", .integer32), optional("price", .decimal)],
            relationships: [
                RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", toMany: true),
                RelationshipDescription(name: "chapters", destination: "Chapter", inverse: "book", toMany: true, ordered: true),
            ],
            uniquenessConstraints: [["isbn"]]
        )
        let ebook = EntityDescription(name: "EBook", parent: "Book", attributes: [optional("fileSize", .integer64)])
        let tag = EntityDescription(
            name: "Tag",
            attributes: [optional("name", .string)],
            relationships: [RelationshipDescription(name: "books", destination: "Book", inverse: "tags", toMany: true)]
        )
        let chapter = EntityDescription(
            name: "Chapter",
            attributes: [optional("title", .string), optional("number", .integer16)],
            relationships: [RelationshipDescription(name: "book", destination: "Book", inverse: "chapters")]
        )
        let shelf = EntityDescription(
            name: "Shelf",
            attributes: [optional("name", .string)],
            relationships: [RelationshipDescription(name: "books", destination: "Book", toMany: true, ordered: true)]
        )
        return ObjectModel(name: "StoreFixture", entities: [sample, author, book, ebook, tag, chapter, shelf])
    }()

    /// The factory of every store kind.
    static let factory = StoreFactory.standard.addingPostgres()

    /// Opens a store of `kind` in `directory` through ``StoreFactory``.
    static func open(_ kind: StoreKind, in directory: URL, readOnly: Bool = false, model: ObjectModel = StoreFixture.model) async throws -> any PersistentStore {
        if kind == .postgres { await PostgresTestServer.dropAbandonedSchemasOnce("st") }
        return try await factory.open(kind.description(in: directory, readOnly: readOnly), model: model)
    }

    /// A fetch resolved against the fixture model.
    static func fetch(
        _ entity: String,
        _ format: String? = nil,
        sort: [SortKey] = [],
        limit: Int = 0,
        offset: Int = 0,
        subentities: Bool = true,
        variables: [String: VariableValue] = [:]
    ) throws -> ResolvedFetch {
        let request = try format.map {
            try FetchRequest(entityName: entity, format: $0, sortDescriptors: sort, fetchLimit: limit, fetchOffset: offset, includesSubentities: subentities)
        } ?? FetchRequest(entityName: entity, sortDescriptors: sort, fetchLimit: limit, fetchOffset: offset, includesSubentities: subentities)
        return try PredicateResolver(model: model).resolve(request, variables: variables, source: format)
    }

    /// Every object of an entity (and its subentities), by primary key.
    static func all(_ entity: String) throws -> ResolvedFetch {
        try fetch(entity)
    }

    /// The commit of a save that must commit.
    @discardableResult
    static func commit(_ store: any PersistentStore, _ changes: StoreChanges, sourceLocation: SourceLocation = #_sourceLocation) async throws -> StoreCommit {
        let result = try await store.save(changes)
        guard case .committed(let commit) = result else {
            Issue.record("expected a commit, got \(result)", sourceLocation: sourceLocation)
            throw FixtureError.notCommitted
        }
        return commit
    }

    /// A snapshot that must exist.
    static func snapshot(_ store: any PersistentStore, _ id: ObjectID, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Snapshot {
        try #require(try await store.snapshots(for: [id]).first, "no snapshot for \(id)", sourceLocation: sourceLocation)
    }

    /// A snapshot with store identifiers removed from every ID, so that
    /// stores can be compared.
    static func portable(_ snapshot: Snapshot) -> Snapshot {
        Snapshot(objectID: portable(snapshot.objectID), version: snapshot.version, values: snapshot.values.mapValues(portable))
    }

    /// An ID without its store identifier.
    static func portable(_ id: ObjectID) -> ObjectID {
        ObjectID(storeIdentifier: "", entityName: id.entityName, key: id.key)
    }

    /// A value with store identifiers removed from IDs.
    static func portable(_ value: PropertyValue) -> PropertyValue {
        switch value {
        case .object(let id): .object(portable(id))
        case .objects(let ids): .objects(ids.map(portable))
        default: value
        }
    }

    /// The values of `key` of the snapshots, as text (`nil` for nil), in order.
    static func column(_ snapshots: [Snapshot], _ key: String) -> [String?] {
        snapshots.map { snapshot in
            switch snapshot[key] {
            case .null: nil
            case .string(let s): s
            default: snapshot[key].description
            }
        }
    }

    enum FixtureError: Error { case notCommitted }
}

/// A deterministic library (authors, books and e-books, tags, chapters,
/// shelves) saved in one change set, with the plain data kept for oracles.
struct LibraryData {
    struct AuthorRow { var name: String?; var rating: Double?; var born: Date? }
    struct BookRow {
        var title: String?
        var isbn: String
        var pages: Int64?
        var price: Decimal?
        var author: Int?
        var tags: [Int]
        var isEBook: Bool
        var fileSize: Int64?
    }
    struct ChapterRow { var title: String; var number: Int64; var book: Int }

    let authors: [AuthorRow]
    let books: [BookRow]
    let tags: [String]
    let chapters: [ChapterRow]
    /// Shelf name → book indexes, in shelf order.
    let shelves: [(String, [Int])]

    /// The library every fetch test uses.
    static let standard = LibraryData()

    private init() {
        authors = [
            AuthorRow(name: "Zoë", rating: 4.5, born: Date(timeIntervalSinceReferenceDate: -900_000_000.25)),
            AuthorRow(name: "zoe", rating: 3.0, born: nil),
            AuthorRow(name: "Émile", rating: nil, born: Date(timeIntervalSinceReferenceDate: -2_000_000_000)),
            AuthorRow(name: "Ann", rating: 4.5, born: Date(timeIntervalSinceReferenceDate: 12_345.000001)),
            AuthorRow(name: "bob", rating: 1.25, born: nil),
            AuthorRow(name: nil, rating: 2.0, born: Date(timeIntervalSinceReferenceDate: 0)),
        ]
        tags = ["sf", "classic", "Poetry", "poetry", "crème"]
        let titles: [String?] = [
            "Crème Brûlée", "crème brûlée", "CREME BRULEE", "Éclair", "e\u{301}clair", "Straße", "strasse", "日本語の本",
            "😀 Smile", "", "a*b?c", "Zebra", "apple", "Apple", nil, "The End", "Ω omega", "Mañana", "manana", "Über",
            "uber", "Zoë's book",
        ]
        var rng = SplitMix(seed: 0x5EED)
        var books: [BookRow] = []
        for (i, title) in titles.enumerated() {
            let pages: Int64? = i % 5 == 3 ? nil : Int64(rng.next() % 600) + 10
            let price: Decimal? = i % 6 == 4 ? nil : Decimal(Int(rng.next() % 5000)) / 100
            books.append(BookRow(
                title: title,
                isbn: String(format: "ISBN-%03d", (i * 37) % 101),
                pages: pages,
                price: price,
                author: i % 7 == 6 ? nil : i % authors.count,
                tags: (0..<tags.count).filter { (i >> $0) & 1 == 1 || (i + $0) % 4 == 0 },
                isEBook: i % 4 == 1,
                fileSize: i % 4 == 1 ? Int64(rng.next() % 10_000_000) : nil
            ))
        }
        self.books = books
        var chapters: [ChapterRow] = []
        for book in [0, 3, 5, 8] {
            for n in 0..<(book % 4 + 1) { chapters.append(ChapterRow(title: "Chapter \(n) of \(book)", number: Int64(n), book: book)) }
        }
        self.chapters = chapters
        shelves = [("favourites", [5, 1, 9, 0]), ("to read", [2, 7])]
    }

    /// The change set inserting the whole library, and the temporary IDs.
    func changes() -> (changes: StoreChanges, authors: [ObjectID], books: [ObjectID], tags: [ObjectID], chapters: [ObjectID]) {
        let authorIDs = authors.map { _ in ObjectID.temporary(entityName: "Author") }
        let bookIDs = books.map { ObjectID.temporary(entityName: $0.isEBook ? "EBook" : "Book") }
        let tagIDs = tags.map { _ in ObjectID.temporary(entityName: "Tag") }
        let chapterIDs = chapters.map { _ in ObjectID.temporary(entityName: "Chapter") }
        var inserts: [StoreChanges.Insert] = []
        for (i, author) in authors.enumerated() {
            var values: [String: PropertyValue] = [:]
            if let name = author.name { values["name"] = .string(name) }
            if let rating = author.rating { values["rating"] = .double(rating) }
            if let born = author.born { values["born"] = .date(born) }
            if i > 0 { values["mentor"] = .object(authorIDs[i - 1]) }
            let favourites = books.indices.filter { ($0 + i) % 5 == 0 }.map { bookIDs[$0] }
            inserts.append(.init(temporaryID: authorIDs[i], values: values, toMany: ["favourites": favourites]))
        }
        for (i, book) in books.enumerated() {
            var values: [String: PropertyValue] = ["isbn": .string(book.isbn)]
            if let title = book.title { values["title"] = .string(title) }
            if let pages = book.pages { values["pages"] = .integer(pages) }
            if let price = book.price { values["price"] = .decimal(price) }
            if let author = book.author { values["author"] = .object(authorIDs[author]) }
            if let fileSize = book.fileSize { values["fileSize"] = .integer(fileSize) }
            let chapterList = chapters.indices.filter { chapters[$0].book == i }.reversed().map { chapterIDs[$0] }
            inserts.append(.init(temporaryID: bookIDs[i], values: values, toMany: [
                "tags": book.tags.map { tagIDs[$0] },
                "chapters": Array(chapterList),
            ]))
        }
        for (i, name) in tags.enumerated() {
            inserts.append(.init(temporaryID: tagIDs[i], values: ["name": .string(name)]))
        }
        for (i, chapter) in chapters.enumerated() {
            inserts.append(.init(temporaryID: chapterIDs[i], values: [
                "title": .string(chapter.title), "number": .integer(chapter.number), "book": .object(bookIDs[chapter.book]),
            ]))
        }
        for (name, members) in shelves {
            inserts.append(.init(temporaryID: .temporary(entityName: "Shelf"), values: ["name": .string(name)], toMany: ["books": members.map { bookIDs[$0] }]))
        }
        return (StoreChanges(inserts: inserts), authorIDs, bookIDs, tagIDs, chapterIDs)
    }

    /// Saves the library into `store`; returns the permanent IDs of the
    /// authors, books, tags and chapters (in data order).
    @discardableResult
    func save(into store: any PersistentStore) async throws -> (authors: [ObjectID], books: [ObjectID], tags: [ObjectID], chapters: [ObjectID]) {
        let (changes, authors, books, tags, chapters) = changes()
        let commit = try await StoreFixture.commit(store, changes)
        let permanentIDs = commit.permanentIDs
        func permanent(_ ids: [ObjectID]) throws -> [ObjectID] {
            try ids.map { try #require(permanentIDs[$0]) }
        }
        return (try permanent(authors), try permanent(books), try permanent(tags), try permanent(chapters))
    }

    /// Book indexes in primary-key (insertion) order, filtered.
    func bookIndexes(where include: (BookRow) -> Bool) -> [Int] {
        books.indices.filter { include(books[$0]) }
    }

    /// Whether `a` sorts before `b` in Strata's string order (Unicode scalars; nil first).
    static func scalarsPrecede(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): false
        case (nil, _): true
        case (_, nil): false
        case let (a?, b?): a.unicodeScalars.map(\.value).lexicographicallyPrecedes(b.unicodeScalars.map(\.value))
        }
    }
}

/// A small deterministic generator (SplitMix64).
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
