import Foundation
import GRDB
import StrataModel
@testable import StrataQuery
import StrataStore
import StrataSQLite

// A small object graph, built deterministically, materialised both in memory
// (for the evaluator) and as rows of a fresh in-memory SQLite database
// created with SQLSchema's DDL (for compiled SQL), so that the same
// ResolvedFetch can be run both ways and the results compared.
//
// Model:
//   Author  name? born? rating? score? mentor(→Author, no inverse)  books ⇄ Book.author
//   Book    title? subtitle? pages? copies? price?(Decimal) weight?(Float) rating? published?
//           isbn?(UUID) cover?(Binary) link?(URI) inPrint?(Boolean) notes(transient)
//           author(→Author)  tags ⇄⇄ Tag.books (many-to-many)  chapters ⇄ Chapter.book (ordered)
//   EBook : Book   fileSize? format?
//   Tag     name?  books
//   Chapter title? number? words?  book(→Book)

/// The fixture's model and IR-building helpers.
enum FixtureModel {
    static let model: ObjectModel = {
        func attribute(_ name: String, _ type: AttributeType, transient: Bool = false) -> AttributeDescription {
            AttributeDescription(name: name, type: type, isOptional: true, isTransient: transient)
        }
        let author = EntityDescription(
            name: "Author",
            attributes: [
                attribute("name", .string), attribute("born", .date), attribute("rating", .double),
                attribute("score", .integer32),
            ],
            relationships: [
                RelationshipDescription(name: "books", destination: "Book", inverse: "author", toMany: true),
                RelationshipDescription(name: "mentor", destination: "Author"),
            ],
            fetchIndexes: [FetchIndex(name: "byName", elements: [.init(property: "name"), .init(property: "score", ascending: false)])]
        )
        let book = EntityDescription(
            name: "Book",
            attributes: [
                attribute("title", .string), attribute("subtitle", .string), attribute("pages", .integer16),
                attribute("copies", .integer64), attribute("price", .decimal), attribute("weight", .float),
                attribute("rating", .double), attribute("published", .date), attribute("isbn", .uuid),
                attribute("cover", .binary), attribute("link", .uri), attribute("inPrint", .boolean),
                attribute("notes", .string, transient: true),
            ],
            relationships: [
                RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", toMany: true),
                RelationshipDescription(name: "chapters", destination: "Chapter", inverse: "book", toMany: true, ordered: true),
            ],
            uniquenessConstraints: [["isbn"]]
        )
        let ebook = EntityDescription(
            name: "EBook",
            parent: "Book",
            attributes: [attribute("fileSize", .integer64), attribute("format", .string)]
        )
        let tag = EntityDescription(
            name: "Tag",
            attributes: [attribute("name", .string)],
            relationships: [RelationshipDescription(name: "books", destination: "Book", inverse: "tags", toMany: true)]
        )
        let chapter = EntityDescription(
            name: "Chapter",
            attributes: [attribute("title", .string), attribute("number", .integer32), attribute("words", .integer64)],
            relationships: [RelationshipDescription(name: "book", destination: "Book", inverse: "chapters")]
        )
        return ObjectModel(name: "Fixture", entities: [author, book, ebook, tag, chapter])
    }()

    // MARK: IR helpers

    /// The attribute `name` of `entity`.
    static func attribute(_ entity: String, _ name: String) -> AttributeDescription {
        model.attribute(named: name, in: entity) ?? AttributeDescription(name: name, type: .undefined)
    }

    /// The to-one steps of a dotted path of relationship names from `entity`.
    static func steps(_ entity: String, _ names: [String]) -> (steps: [RelationshipStep], end: String) {
        var current = entity
        var steps: [RelationshipStep] = []
        for name in names {
            guard let relationship = model.relationship(named: name, in: current) else { break }
            steps.append(RelationshipStep(sourceEntity: current, relationship: relationship))
            current = relationship.destinationEntityName
        }
        return (steps, current)
    }

    /// `a.b.attr` from `entity`: an attribute operand through to-one steps.
    static func key(_ entity: String, _ path: String) -> QueryOperand {
        var names = path.split(separator: ".").map(String.init)
        let last = names.removeLast()
        let (steps, end) = self.steps(entity, names)
        return .attribute(steps, attribute(end, last))
    }

    /// `a.b` from `entity` as an object operand (`""` is SELF).
    static func object(_ entity: String, _ path: String) -> QueryOperand {
        .object(steps(entity, path.split(separator: ".").map(String.init)).steps)
    }

    /// `a.b.toMany` from `entity` as a collection path.
    static func collection(_ entity: String, _ path: String) -> CollectionPath {
        var names = path.split(separator: ".").map(String.init)
        let last = names.removeLast()
        let (steps, end) = self.steps(entity, names)
        let relationship = model.relationship(named: last, in: end) ?? RelationshipDescription(name: last, destination: end, toMany: true)
        return CollectionPath(toOneSteps: steps, toMany: RelationshipStep(sourceEntity: end, relationship: relationship))
    }

    /// The entity a collection path leads to.
    static func destination(_ path: CollectionPath) -> String { path.toMany.destinationEntity }

    /// `lhs op rhs` with a constant right side.
    static func compare(_ lhs: QueryOperand, _ op: ComparisonOperator, _ rhs: PropertyValue, _ domain: ComparisonDomain, _ options: StringComparisonOptions = []) -> QueryPredicate {
        .compare(QueryComparison(lhs: lhs, op: op, rhs: .constant(rhs), domain: domain, options: options))
    }

    /// `lhs op rhs` between two operands.
    static func compare(_ lhs: QueryOperand, _ op: ComparisonOperator, _ rhs: QueryOperand, _ domain: ComparisonDomain, _ options: StringComparisonOptions = []) -> QueryPredicate {
        .compare(QueryComparison(lhs: lhs, op: op, rhs: rhs, domain: domain, options: options))
    }

    /// `lhs IN {…}` / `lhs BETWEEN {lo, hi}`.
    static func list(_ lhs: QueryOperand, _ op: ComparisonOperator, _ values: [PropertyValue], _ domain: ComparisonDomain, _ options: StringComparisonOptions = []) -> QueryPredicate {
        .compare(QueryComparison(lhs: lhs, op: op, rhs: .list(values), domain: domain, options: options))
    }

    /// A sort key on a dotted path from `entity`.
    static func sort(_ entity: String, _ path: String, ascending: Bool = true, caseInsensitive: Bool = false) -> QuerySortKey {
        var names = path.split(separator: ".").map(String.init)
        let last = names.removeLast()
        let (steps, end) = self.steps(entity, names)
        return QuerySortKey(steps: steps, attribute: attribute(end, last), ascending: ascending, caseInsensitive: caseInsensitive)
    }

    /// An ObjectID of the fixture's store.
    static func id(_ entity: String, _ pk: Int64) -> ObjectID {
        ObjectID(storeIdentifier: FixtureData.storeIdentifier, entityName: entity, key: .permanent(pk))
    }
}

// MARK: - Data

/// One object of the fixture graph.
struct FixtureRecord: Sendable {
    var entity: String
    var primaryKey: Int64
    var values: [String: PropertyValue] = [:]
    var toOne: [String: Int] = [:]
    var toMany: [String: [Int]] = [:]

    /// An attribute's value (`.null` when unset).
    subscript(_ name: String) -> PropertyValue { values[name] ?? .null }
}

/// The fixture graph: records addressed by index, in a shuffled order that
/// differs from primary-key order (so ties must really be broken by key).
struct FixtureData: Sendable {
    static let storeIdentifier = "FIXTURE-STORE"
    var records: [FixtureRecord]

    /// The deterministic graph every fixture uses.
    static let shared = FixtureData.generate()

    /// Indices of the records of `entity` (and subentities when asked).
    func indices(of entity: String, subentities: Bool = true) -> [Int] {
        let names = subentities ? Set(FixtureModel.model.hierarchy(of: entity)) : [entity]
        return records.indices.filter { names.contains(records[$0].entity) }
    }

    /// The records of `entity` (and subentities when asked).
    func all(_ entity: String, subentities: Bool = true) -> [FixtureRecord] {
        indices(of: entity, subentities: subentities).map { records[$0] }
    }

    /// The destination records of a to-many.
    func many(_ record: FixtureRecord, _ name: String) -> [FixtureRecord] {
        (record.toMany[name] ?? []).map { records[$0] }
    }

    /// The destination record of a to-one.
    func one(_ record: FixtureRecord, _ name: String) -> FixtureRecord? {
        record.toOne[name].map { records[$0] }
    }

    // MARK: Generation

    static let titles: [String?] = [
        "Crème Brûlée", "crème brûlée", "CREME BRULEE", "Éclair", "éclair", "e\u{301}clair", "Straße", "strasse",
        "résumé", "Resume", "naïve", "Ångström", "angstrom", "日本語の本", "😀 Smile", "", "a*b?c", "back\\slash",
        "Zebra", "apple", "Apple", "APPLE", "Banana split", "x", "The End", "e\u{301}", nil, nil, "Ω omega", "ω lower",
        "Mañana", "manana", "Ça va", "ca va", "Über", "uber", "Zoë", "zoe", "line\nbreak", "tab\there",
    ]
    static let authorNames: [String?] = [
        "Zoë", "zoe", "Émile", "emile", "Ann", "ann", "Bob", "BOB", nil, "Çelik", "celik", "Ørsted",
        "orsted", "李", "Ann", "Dmitri", nil, "dmitri", "Eve", "Åsa",
    ]
    static let tagNames: [String?] = [
        "fiction", "Fiction", "science", "Science-Fiction", "poésie", "poesie", "history", nil, "art", "Art", "kids", "cook", "ÉTÉ", "été", "travel",
    ]
    static let prices: [String?] = [
        "0.1", "0.2", "0.3", "19.99", "-5", "-0.5", "-0.51", "0", "100", "1e-20", "12345678901234567890.123456789", nil,
        "7.50", "7.5", "0.30", "1000000", "-1000000", "3.14159", nil, "2.5",
    ]

    static func generate() -> FixtureData {
        var random = FixtureRandom(seed: 0x5EED_CAFE)
        var records: [FixtureRecord] = []

        func permutation(_ n: Int) -> [Int64] {
            var keys = (1...Int64(n)).map { $0 }
            for i in stride(from: n - 1, to: 0, by: -1) {
                keys.swapAt(i, Int(random.next() % UInt64(i + 1)))
            }
            return keys
        }

        // Authors: 20, keys shuffled.
        let authorKeys = permutation(20)
        var authors: [Int] = []
        for i in 0..<20 {
            var record = FixtureRecord(entity: "Author", primaryKey: authorKeys[i])
            if let name = authorNames[i] { record.values["name"] = .string(name) }
            if i % 4 != 3 { record.values["born"] = .date(Date(timeIntervalSinceReferenceDate: Double(i * 86_400 * 397) - 3.0e8 + 0.25)) }
            if i % 5 != 4 { record.values["rating"] = .double([0.0, -0.0, 4.5, 3.25, 1e300, -2.5, 0.1, 0.30000000000000004][i % 8]) }
            if i % 6 != 5 { record.values["score"] = .integer(Int64([3, 1, 4, 1, 5, 9, 2, 6, -5, 0][i % 10])) }
            authors.append(records.count)
            records.append(record)
        }
        // Mentors: a chain with holes (author i mentored by author (i+3) % 20 for i % 3 != 0).
        for (i, index) in authors.enumerated() where i % 3 != 0 {
            records[index].toOne["mentor"] = authors[(i + 3) % 20]
        }

        // Tags: 15.
        let tagKeys = permutation(15)
        var tags: [Int] = []
        for i in 0..<15 {
            var record = FixtureRecord(entity: "Tag", primaryKey: tagKeys[i])
            if let name = tagNames[i] { record.values["name"] = .string(name) }
            tags.append(records.count)
            records.append(record)
        }

        // Books: 120 (every 4th an EBook), keys shuffled within the hierarchy.
        let bookKeys = permutation(120)
        var books: [Int] = []
        for i in 0..<120 {
            let isEBook = i % 4 == 1
            var record = FixtureRecord(entity: isEBook ? "EBook" : "Book", primaryKey: bookKeys[i])
            if let title = titles[i % titles.count] { record.values["title"] = .string(title) }
            if i % 3 == 0 { record.values["subtitle"] = .string(i % 2 == 0 ? "Vol. \(i / 6)" : "vol. \(i / 6)") }
            if i % 7 != 6 { record.values["pages"] = .integer(Int64([100, 250, 32767, -32768, 0, 99, 100][i % 7])) }
            if i % 8 != 7 {
                let copies: [Int64] = [1, 9_007_199_254_740_993, 9_007_199_254_740_992, -3, 0, 42, Int64.max, Int64.min + 1]
                record.values["copies"] = .integer(copies[i % 8])
            }
            if let price = prices[i % prices.count], let decimal = Decimal(string: price) { record.values["price"] = .decimal(decimal) }
            if i % 5 != 2 { record.values["weight"] = .double(Double(Float([0.1, 1.5, 2.25, 0.3, -1][i % 5]))) }
            if i % 6 != 1 { record.values["rating"] = .double([0.1, 0.2, 0.3, 0.30000000000000004, 4.75, -1.0][(i / 2) % 6]) }
            if i % 9 != 8 { record.values["published"] = .date(Date(timeIntervalSinceReferenceDate: Double(i) * 1_000_003.5 - 5.0e7)) }
            if i % 10 != 9 {
                var bytes = [UInt8](repeating: 0, count: 16)
                for b in 0..<16 { bytes[b] = UInt8(truncatingIfNeeded: random.next()) }
                if i % 10 == 0 { bytes[0] = 0xFF }
                let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                       bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
                record.values["isbn"] = .uuid(uuid)
            }
            switch i % 6 {
            case 0: record.values["cover"] = .binary(Data([1, 2, 3]))
            case 1: record.values["cover"] = .binary(Data([1, 2]))
            case 2: record.values["cover"] = .binary(Data())
            case 3: record.values["cover"] = .binary(Data([0xFF, 0x00]))
            case 4: record.values["cover"] = .binary(Data([1, 2, 3, 0]))
            default: break
            }
            if i % 4 != 2 { record.values["link"] = .uri(["https://example.com/b/\(i)", "HTTPS://EXAMPLE.COM/B/\(i)", "urn:isbn:\(i)"][i % 3]) }
            if i % 5 != 3 { record.values["inPrint"] = .boolean(i % 2 == 0) }
            record.values["notes"] = .string("transient \(i)")
            if isEBook {
                if i % 3 != 0 { record.values["fileSize"] = .integer(Int64(i) * 1_048_576) }
                record.values["format"] = .string(["epub", "PDF", "Mobi", "pdf"][i % 4])
            }
            // Author: nil for every 11th book; books cluster on the first 14
            // authors so authors 14–18 have none; author 19 has exactly books
            // 0 and 1, priced 0.1 and 0.2 (so its @sum.price is exactly 0.3).
            if i % 11 != 10 {
                record.toOne["author"] = i < 2 ? authors[19] : authors[(i * 5) % 14]
            }
            books.append(records.count)
            records.append(record)
        }
        for index in books {
            if let author = records[index].toOne["author"] {
                records[author].toMany["books", default: []].append(index)
            }
        }
        // Tags: 0–3 per book (many-to-many); both sides kept.
        for (i, index) in books.enumerated() {
            let count = i % 4
            var chosen: [Int] = []
            for k in 0..<count {
                let tag = tags[(i * 5 + k * 4) % 15]
                if !chosen.contains(tag) { chosen.append(tag) }
            }
            records[index].toMany["tags"] = chosen
            for tag in chosen { records[tag].toMany["books", default: []].append(index) }
        }

        // Chapters: 60, on the first 25 books, ordered.
        let chapterKeys = permutation(60)
        for i in 0..<60 {
            var record = FixtureRecord(entity: "Chapter", primaryKey: chapterKeys[i])
            if i % 7 != 3 { record.values["title"] = .string(["Intro", "intro", "Épilogue", "Chapter \(i)", "Finale"][i % 5]) }
            if i % 9 != 4 { record.values["number"] = .integer(Int64(i % 6)) }
            if i % 5 != 1 { record.values["words"] = .integer(Int64((i * 1237) % 5000)) }
            let book = books[(i * 3) % 25]
            record.toOne["book"] = book
            let index = records.count
            records.append(record)
            // Insert at the front for odd chapters so order differs from insertion and key order.
            if i % 2 == 1 {
                records[book].toMany["chapters", default: []].insert(index, at: 0)
            } else {
                records[book].toMany["chapters", default: []].append(index)
            }
        }

        // Shuffle the record order (fix up indices) so input order is neither key nor creation order.
        let order = permutation(records.count).map { Int($0) - 1 }
        var position = [Int](repeating: 0, count: records.count)
        for (newIndex, oldIndex) in order.enumerated() { position[oldIndex] = newIndex }
        var shuffled = order.map { records[$0] }
        for i in shuffled.indices {
            shuffled[i].toOne = shuffled[i].toOne.mapValues { position[$0] }
            shuffled[i].toMany = shuffled[i].toMany.mapValues { $0.map { position[$0] } }
        }
        return FixtureData(records: shuffled)
    }
}

/// A SplitMix64 generator (deterministic across platforms).
struct FixtureRandom: RandomNumberGenerator {
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

// MARK: - Accessor

/// Reads the fixture graph; objects are record indices, properties are
/// resolved to their names at compile time (a custom key type).
struct FixtureAccessor: ObjectGraphAccessor {
    let data: FixtureData

    func attributeKey(_ attribute: AttributeDescription, entity: String) throws(StrataError) -> String {
        guard FixtureModel.model.attribute(named: attribute.name, in: entity) != nil else {
            throw StrataError(.predicateType, "no attribute '\(attribute.name)' on \(entity)")
        }
        return attribute.name
    }

    func relationshipKey(_ relationship: RelationshipDescription, entity: String) throws(StrataError) -> String {
        relationship.name
    }

    func value(_ attribute: String, of object: Int) -> PropertyValue {
        data.records[object].values[attribute] ?? .null
    }

    func destination(_ relationship: String, of object: Int) -> Int? {
        data.records[object].toOne[relationship]
    }

    func destinations(_ relationship: String, of object: Int) -> [Int] {
        data.records[object].toMany[relationship] ?? []
    }

    func objectID(of object: Int) -> ObjectID {
        let record = data.records[object]
        return ObjectID(storeIdentifier: FixtureData.storeIdentifier, entityName: record.entity, key: .permanent(record.primaryKey))
    }

    func entityName(of object: Int) -> String {
        data.records[object].entity
    }

    func primaryKey(of object: Int) -> Int64? {
        data.records[object].primaryKey
    }
}

// MARK: - Fixture

/// The fixture: the shared graph in memory plus a fresh in-memory SQLite
/// database holding the same objects.
final class QueryFixture {
    let data: FixtureData
    let model: ObjectModel
    let schema: SQLSchema
    let database: DatabaseQueue
    let accessor: FixtureAccessor

    init(data: FixtureData = .shared) throws {
        self.data = data
        self.model = FixtureModel.model
        self.schema = try SQLSchema(model: model)
        self.accessor = FixtureAccessor(data: data)
        var configuration = Configuration()
        configuration.prepareDatabase { db in SQLiteFunctions.register(on: db) }
        self.database = try DatabaseQueue(configuration: configuration)
        try database.write { db in
            for statement in schema.createStatements() { try db.execute(sql: statement) }
            try insertRows(db)
        }
    }

    private func insertRows(_ db: Database) throws {
        for row in FixtureRows.rows(data, layout: schema, model: model) {
            let names = row.cells.map { SQLSchema.quote($0.column) }.joined(separator: ", ")
            let placeholders = Array(repeating: "?", count: row.cells.count).joined(separator: ", ")
            try db.execute(
                sql: "INSERT INTO \(SQLSchema.quote(row.table)) (\(names)) VALUES (\(placeholders))",
                arguments: StatementArguments(row.cells.map(\.value.databaseValue))
            )
        }
    }

    /// The fetch run in memory: primary keys in result order.
    func memory(_ fetch: ResolvedFetch) throws -> [Int64] {
        let results = try FetchEvaluator.run(fetch, model: model, over: data.records.indices, accessor: accessor)
        return results.map { data.records[$0].primaryKey }
    }

    /// The fetch compiled to SQL and run: primary keys in result order
    /// (checking on the way that the count query agrees).
    func sql(_ fetch: ResolvedFetch) throws -> [Int64] {
        let compiler = SQLQueryCompiler(schema: schema)
        let query = try compiler.primaryKeyQuery(fetch)
        let count = try compiler.countQuery(fetch)
        return try database.read { db in
            let keys = try Int64.fetchAll(db, sql: query.sql, arguments: query.statementArguments)
            let counted = try Int.fetchOne(db, sql: count.sql, arguments: count.statementArguments) ?? -1
            guard counted == keys.count else {
                throw StrataError(.unsupported, "count query gave \(counted) for \(keys.count) rows")
            }
            return keys
        }
    }

    /// Runs `fetch` both ways.
    func runBoth(_ fetch: ResolvedFetch) throws -> (memory: [Int64], sql: [Int64]) {
        (try memory(fetch), try sql(fetch))
    }
}
