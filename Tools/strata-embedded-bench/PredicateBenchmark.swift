import Foundation
import GRDB
import StrataModel
import StrataQuery
import StrataStore
import StrataSQLite
import StrataSamples

/// Predicate evaluation in memory vs the same predicate compiled to SQL, on
/// the same Book rows, each returning the matching primary keys in order.
struct PredicateBenchmark {
    let rows: Int
    let runs: Int

    /// The cases: a predicate and a sort.
    static let cases: [(String, [StrataQuery.SortDescriptor])] = [
        ("pages > 500", [StrataQuery.SortDescriptor("title")]),
        ("pages BETWEEN {100, 200} AND author == 'Tolkien'", []),
        ("title BEGINSWITH 'river'", [StrataQuery.SortDescriptor("pages")]),
        ("title CONTAINS[cd] 'creme'", []),
        ("price < 10.5", [StrataQuery.SortDescriptor("price", ascending: false)]),
        ("title LIKE[c] '*glass*night*'", []),
        ("author IN {'Borges', 'Calvino'} OR pages < 50", [StrataQuery.SortDescriptor("author"), StrataQuery.SortDescriptor("title", caseInsensitive: true)]),
    ]

    func run() throws {
        let model = BooksSample.model
        let data = BookDataset(count: rows)
        let schema = try SQLSchema(model: model, entityNames: ["Book"])
        let compiler = SQLQueryCompiler(schema: schema)
        let resolver = PredicateResolver(model: model)

        // The SQL side: a file database like a store's, WAL, functions registered.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Configuration()
        configuration.prepareDatabase { db in SQLiteFunctions.register(on: db) }
        let pool = try DatabasePool(path: directory.appendingPathComponent("bench.sqlite").path, configuration: configuration)
        let attributes = model.attributes(of: "Book").filter(\.isPersisted)
        try pool.write { db in
            for statement in schema.createStatements() { try db.execute(sql: statement) }
            guard let table = schema.table(for: "Book") else { throw StrataError(.storeOpen, "no Book table") }
            let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + attributes.compactMap { schema.column(forAttribute: $0.name, in: "Book") }
            let sql = "INSERT INTO \(SQLSchema.quote(table.name)) (\(columns.map(SQLSchema.quote).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
            let statement = try db.makeStatement(sql: sql)
            let entityNumber = schema.entityNumber(of: "Book") ?? 1
            for (i, row) in data.rows.enumerated() {
                var arguments: [DatabaseValue] = [Int64(i + 1).databaseValue, entityNumber.databaseValue, Int64(1).databaseValue]
                for attribute in attributes {
                    arguments.append(SQLiteValueCoding.databaseValue(for: Self.value(of: attribute.name, in: row)))
                }
                try statement.execute(arguments: StatementArguments(arguments))
            }
        }

        // The in-memory side: the same values, by attribute position.
        let objects = BenchObjects(rows: data.rows, attributes: model.attributes(of: "Book"))

        print("Predicate evaluation vs compiled SQL, \(rows) Book rows (best of \(runs); matching primary keys in order)")
        let widths = [52, 8, 11, 11, 7]
        printRow(["predicate [sort]", "matches", "memory s", "SQL s", "mem/SQL"], widths: widths)
        for (format, sort) in Self.cases {
            let request = try FetchRequest(entityName: "Book", format: format, sortDescriptors: sort)
            let fetch = try resolver.resolve(request)
            let query = try compiler.primaryKeyQuery(fetch)
            let evaluator = try FetchEvaluator(fetch, model: model, accessor: objects)
            var memoryResult: [Int32] = []
            var sqlResult: [Int64] = []
            var memoryBest = Double.infinity
            var sqlBest = Double.infinity
            for _ in 0..<runs {
                memoryBest = min(memoryBest, try Stopwatch.time { memoryResult = try evaluator.run(over: objects.indices) })
                sqlBest = min(sqlBest, try Stopwatch.time {
                    sqlResult = try pool.read { db in try Int64.fetchAll(db, sql: query.sql, arguments: query.statementArguments) }
                })
            }
            let agree = memoryResult.map { Int64($0) + 1 } == sqlResult
            let label = format + (sort.isEmpty ? "" : " [" + sort.map { ($0.ascending ? "" : "-") + $0.keyPath + ($0.caseInsensitive ? "[c]" : "") }.joined(separator: ",") + "]")
            printRow([label, "\(sqlResult.count)\(agree ? "" : " DIFFER")", String(format: "%.4f", memoryBest), String(format: "%.4f", sqlBest), String(format: "%.2f", memoryBest / sqlBest)], widths: widths)
        }
        print("")
    }

    static func value(of attribute: String, in row: BookDataset.Row) -> PropertyValue {
        switch attribute {
        case "uuid": .uuid(row.uuid)
        case "title": .string(row.title)
        case "author": .string(row.author)
        case "publishDate": .date(row.publishDate)
        case "price": .decimal(row.price)
        case "pages": .integer(row.pages)
        case "canonicalTitle": .string(StringFolding.canonical(row.title))
        default: .null
        }
    }
}

/// The benchmark's in-memory rows, read by position.
struct BenchObjects: ObjectGraphAccessor {
    typealias Object = Int32
    typealias AttributeKey = Int
    typealias RelationshipKey = Int

    let columns: [[PropertyValue]]
    let names: [String: Int]
    let count: Int

    init(rows: [BookDataset.Row], attributes: [AttributeDescription]) {
        var names: [String: Int] = [:]
        var columns: [[PropertyValue]] = []
        for (i, attribute) in attributes.enumerated() {
            names[attribute.name] = i
            columns.append(rows.map { PredicateBenchmark.value(of: attribute.name, in: $0) })
        }
        self.columns = columns
        self.names = names
        self.count = rows.count
    }

    var indices: [Int32] { (0..<Int32(count)).map { $0 } }

    func attributeKey(_ attribute: AttributeDescription, entity: String) throws(StrataError) -> Int {
        guard let index = names[attribute.name] else { throw StrataError(.predicateType, "no column \(attribute.name)") }
        return index
    }

    func relationshipKey(_ relationship: RelationshipDescription, entity: String) throws(StrataError) -> Int {
        throw StrataError(.unsupported, "the benchmark rows have no relationships")
    }

    func value(_ attribute: Int, of object: Int32) -> PropertyValue { columns[attribute][Int(object)] }
    func destination(_ relationship: Int, of object: Int32) -> Int32? { nil }
    func destinations(_ relationship: Int, of object: Int32) -> [Int32] { [] }
    func objectID(of object: Int32) -> ObjectID { ObjectID(storeIdentifier: "bench", entityName: "Book", key: .permanent(Int64(object) + 1)) }
    func entityName(of object: Int32) -> String { "Book" }
    func primaryKey(of object: Int32) -> Int64? { Int64(object) + 1 }
}
