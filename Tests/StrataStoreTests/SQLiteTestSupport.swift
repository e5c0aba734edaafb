import Foundation
import GRDB
import StrataModel
import StrataQuery
import Testing
@testable import StrataStore
@testable import StrataSQLite

/// A fresh temporary directory per test, removed by ``remove()``.
struct SQLiteTestDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-sqlite-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A store file inside the directory (in a subdirectory, to check it is created).
    var storeURL: URL { url.appendingPathComponent("stores/Library.sqlite") }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// The models the SQLite store tests use.
enum SQLiteTestModels {
    static func optional(_ name: String, _ type: AttributeType, default value: PropertyValue = .null) -> AttributeDescription {
        AttributeDescription(name: name, type: type, isOptional: true, defaultValue: value)
    }

    /// Every attribute type (`Item`), and a library: authors and their books
    /// (one-to-many with inverse), shelves (ordered, inverse foreign key),
    /// tags (many-to-many), related books (ordered to-many without inverse),
    /// novels (a subentity of Book), reviews (a to-one to a hierarchy).
    static func library(
        bookAttributes extraBookAttributes: [AttributeDescription] = [],
        bookFetchIndexes: [FetchIndex] = [],
        extraEntities: [EntityDescription] = [],
        authorNameType: AttributeType = .string,
        dropPages: Bool = false
    ) -> ObjectModel {
        var bookAttributes = [
            optional("title", .string),
            optional("isbn", .string),
        ]
        if !dropPages { bookAttributes.append(optional("pages", .integer16)) }
        bookAttributes += extraBookAttributes
        return ObjectModel(name: "Library", entities: [
            EntityDescription(name: "Item", attributes: [
                optional("i16", .integer16), optional("i32", .integer32), optional("i64", .integer64),
                optional("dec", .decimal), optional("dbl", .double), optional("flt", .float),
                optional("str", .string), optional("flag", .boolean), optional("when", .date),
                optional("blob", .binary), optional("uid", .uuid), optional("link", .uri),
                AttributeDescription(name: "opaque", type: .transformable, isOptional: true, valueTransformerName: "NSSecureUnarchiveFromData"),
                AttributeDescription(name: "scratch", type: .string, isOptional: true, isTransient: true),
            ]),
            EntityDescription(name: "Author", attributes: [optional("name", authorNameType)], relationships: [
                RelationshipDescription(name: "books", destination: "Book", inverse: "author", toMany: true),
            ]),
            EntityDescription(name: "Book", attributes: bookAttributes, relationships: [
                RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "books"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", toMany: true),
                RelationshipDescription(name: "related", destination: "Book", toMany: true, ordered: true),
            ], fetchIndexes: bookFetchIndexes, uniquenessConstraints: [["isbn"]]),
            EntityDescription(name: "Novel", parent: "Book", attributes: [optional("genre", .string)]),
            EntityDescription(name: "Shelf", attributes: [optional("label", .string)], relationships: [
                RelationshipDescription(name: "books", destination: "Book", inverse: "shelf", toMany: true, ordered: true),
            ]),
            EntityDescription(name: "Tag", attributes: [optional("name", .string)], relationships: [
                RelationshipDescription(name: "books", destination: "Book", inverse: "tags", toMany: true),
            ]),
            EntityDescription(name: "Review", attributes: [optional("stars", .integer16)], relationships: [
                RelationshipDescription(name: "book", destination: "Book"),
            ]),
        ] + extraEntities)
    }
}

extension SQLiteTestModels {
    /// An entity whose name sorts before every library entity.
    static let aaa = EntityDescription(name: "AAA", attributes: [optional("note", .string)])

    /// The library's entities (without `removing`) plus `extra`, in two
    /// configurations: `Main` holds the library's, and `extra` when
    /// `extraInMain`; `Other` holds `extra` otherwise.
    static func configured(extra: [EntityDescription] = [], extraInMain: Bool = false, removing: Set<String> = []) -> ObjectModel {
        let library = library().entities.filter { !removing.contains($0.name) }
        let main = library.map(\.name) + (extraInMain ? extra.map(\.name) : [])
        return ObjectModel(
            name: "Library",
            entities: library + extra,
            configurations: [
                ConfigurationDescription(name: "Main", entities: main),
                ConfigurationDescription(name: "Other", entities: extraInMain ? [] : extra.map(\.name)),
            ]
        )
    }

    /// Entities whose tables and columns would take the store's own names
    /// (`Z_METADATA`, `Z_PRIMARYKEY`, `Z_STRATA_…`) if the layout did not
    /// skip them.
    static var reservedNames: ObjectModel {
        ObjectModel(name: "Reserved", entities: [
            EntityDescription(name: "_METADATA", attributes: [optional("value", .string)]),
            EntityDescription(name: "_PRIMARYKEY", attributes: [optional("value", .integer64)], relationships: [
                RelationshipDescription(name: "items", destination: "_STRATA_MIGRATING_1", toMany: true),
            ]),
            EntityDescription(name: "_STRATA_MIGRATING_1", attributes: [optional("_STRATA_MIGRATING_1", .string)]),
            EntityDescription(name: "STRATA", relationships: [
                RelationshipDescription(name: "x", destination: "_METADATA", toMany: true),
            ]),
        ])
    }
}

/// Raw reads of a store file, bypassing the store.
enum SQLiteFile {
    /// The `Z_ENT` of every row of `table`, by primary key.
    static func entityNumbers(_ url: URL, table: String) async throws -> [Int64] {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try await queue.read { db in
            try Int64.fetchAll(db, sql: "SELECT \"Z_ENT\" FROM \(SQLSchema.quote(table)) ORDER BY \"Z_PK\"")
        }
    }

    /// The value of a `Z_METADATA` key, as text.
    static func metadata(_ url: URL, key: String) async throws -> String? {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try await queue.read { db in
            try String.fetchOne(db, sql: "SELECT CAST(\"Z_VALUE\" AS TEXT) FROM \"Z_METADATA\" WHERE \"Z_KEY\" = ?", arguments: [key])
        }
    }

    /// The names of the tables of the file (SQLite's own excluded), sorted.
    static func tables(_ url: URL) async throws -> [String] {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try await queue.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
        }
    }
}

extension DatabaseQueue {
    /// Takes the write lock on this connection for `seconds`, or until
    /// `release` is signalled (at most 30 s) when given, then commits.
    /// Returns once the lock is held (a fixed wait instead lost the race on
    /// a loaded machine), with the task that releases it.
    func holdWriteLock(seconds: Double, release: DispatchSemaphore? = nil) async -> Task<Void, any Error> {
        let (held, signal) = AsyncStream<Void>.makeStream()
        let task = Task {
            defer { signal.finish() }
            try await writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                signal.yield()
                if let release {
                    _ = release.wait(timeout: .now() + 30)
                } else {
                    Thread.sleep(forTimeInterval: seconds)
                }
                try db.execute(sql: "COMMIT")
            }
        }
        for await _ in held { break }
        return task
    }
}

extension PersistentStore {
    /// Saves and expects a commit.
    @discardableResult
    func commit(_ changes: StoreChanges) async throws -> StoreCommit {
        let result = try await save(changes)
        guard case .committed(let commit) = result else {
            throw StrataError(.storeSave, "expected a commit, got \(result)")
        }
        return commit
    }
}

extension SQLiteStore {
    /// Inserts one object and returns its permanent ID.
    func insert(_ entity: String, _ values: [String: PropertyValue], toMany: [String: [ObjectID]] = [:]) async throws -> ObjectID {
        let temporary = ObjectID.temporary(entityName: entity)
        let commit = try await self.commit(StoreChanges(inserts: [.init(temporaryID: temporary, values: values, toMany: toMany)]))
        guard let permanent = commit.permanentIDs[temporary] else {
            throw StrataError(.storeSave, "no permanent ID for \(temporary)")
        }
        return permanent
    }

    /// Resolves and runs a fetch.
    func fetch(_ entity: String, _ format: String? = nil, sort: [StrataQuery.SortDescriptor] = [], limit: Int = 0, offset: Int = 0, subentities: Bool = true) async throws -> [Snapshot] {
        try await fetchSnapshots(resolved(entity, format, sort: sort, limit: limit, offset: offset, subentities: subentities))
    }

    nonisolated func resolved(_ entity: String, _ format: String? = nil, sort: [StrataQuery.SortDescriptor] = [], limit: Int = 0, offset: Int = 0, subentities: Bool = true) throws -> ResolvedFetch {
        let request = FetchRequest(
            entityName: entity,
            predicate: try format.map { try PredicateParser.parse($0) },
            sortDescriptors: sort,
            fetchLimit: limit,
            fetchOffset: offset,
            includesSubentities: subentities
        )
        return try PredicateResolver(model: model).resolve(request)
    }
}

/// Expects `body` to throw a ``StrataError`` with `code`.
func expectError(_ code: StrataError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected error \(code.rawValue)", sourceLocation: sourceLocation)
    } catch let error as StrataError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected a StrataError \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
    }
}
