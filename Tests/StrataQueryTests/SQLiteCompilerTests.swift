import Foundation
import GRDB
import StrataModel
import Testing
@testable import StrataQuery
import StrataStore
import StrataSQLite

private typealias M = FixtureModel

@Suite struct SQLiteCompilerTests {
    private func attribute(_ name: String, _ type: AttributeType, transient: Bool = false, indexed: Bool = false) -> AttributeDescription {
        AttributeDescription(name: name, type: type, isOptional: true, isTransient: transient, isIndexed: indexed)
    }

    /// A fresh in-memory database with the functions registered.
    private func database() throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in SQLiteFunctions.register(on: db) }
        return try DatabaseQueue(configuration: configuration)
    }

    // MARK: - Schema

    /// Collisions: `name`/`Name`, an attribute spelled like a system column,
    /// siblings with the same attribute name and different types, quotes.
    private var collidingModel: ObjectModel {
        ObjectModel(entities: [
            EntityDescription(name: "Thing", attributes: [
                attribute("name", .string), attribute("Name", .integer64), attribute("_PK", .string), attribute("memo", .string, transient: true),
            ]),
            EntityDescription(name: "Sub1", parent: "Thing", attributes: [attribute("value", .string)], uniquenessConstraints: [["value"]]),
            EntityDescription(name: "Sub2", parent: "Thing", attributes: [attribute("value", .double)]),
            EntityDescription(name: "We\"ird", attributes: [attribute("qu\"ote", .string)], relationships: [
                RelationshipDescription(name: "things", destination: "Thing", toMany: true),
            ]),
        ])
    }

    @Test func columnsAreCollisionFreeAndDeterministic() throws {
        let schema = try SQLSchema(model: collidingModel)
        let table = try #require(schema.table(for: "Sub1"))
        #expect(table.name == "ZTHING")
        #expect(table.entities == ["Sub1", "Sub2", "Thing"])
        let names = table.columns.map(\.name)
        #expect(Set(names.map { $0.lowercased() }).count == names.count)
        #expect(names.prefix(3) == ["Z_PK", "Z_ENT", "Z_OPT"])
        let lower = schema.column(forAttribute: "name", in: "Thing")
        let upper = schema.column(forAttribute: "Name", in: "Thing")
        #expect(lower != nil && upper != nil && lower?.lowercased() != upper?.lowercased())
        #expect(schema.column(forAttribute: "_PK", in: "Thing") != "Z_PK")
        #expect(schema.column(forAttribute: "memo", in: "Thing") == nil)
        #expect(schema.column(forAttribute: "name", in: "Sub2") == lower)
        let v1 = try #require(schema.column(forAttribute: "value", in: "Sub1"))
        let v2 = try #require(schema.column(forAttribute: "value", in: "Sub2"))
        #expect(v1.lowercased() != v2.lowercased())
        #expect(table.columns.first { $0.name == v1 }?.sqlType == "TEXT")
        #expect(table.columns.first { $0.name == v2 }?.sqlType == "REAL")

        // Same layout whatever the declaration order.
        let reversed = ObjectModel(entities: collidingModel.entities.reversed())
        #expect(try SQLSchema(model: reversed).createStatements() == schema.createStatements())
        // Entity numbers: 1-based in name order.
        #expect(schema.entityNumber(of: "Sub1") == 1)
        #expect(schema.entityNumber(of: "Thing") == 3)
        #expect(schema.entityNumber(of: "We\"ird") == 4)
        #expect(schema.entityName(forNumber: 2) == "Sub2")
    }

    @Test func quotingDoublesEmbeddedQuotesAndRoundTripsThroughSQLite() throws {
        #expect(SQLSchema.quote("ZBOOK") == "\"ZBOOK\"")
        #expect(SQLSchema.quote("") == "\"\"")
        #expect(SQLSchema.quote("a\"b") == "\"a\"\"b\"")
        #expect(SQLSchema.quote("\"\"") == "\"\"\"\"\"\"")
        #expect(SQLSchema.quote("é\"ü") == "\"é\"\"ü\"")
        let queue = try DatabaseQueue()
        for name in ["plain", "with \"quotes\"", "\"", "ünïcode \" mix"] {
            let table = SQLSchema.quote(name)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE \(table) (x)")
                #expect(try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [name]) == name)
                try db.execute(sql: "DROP TABLE \(table)")
            }
        }
    }

    @Test func ddlRunsAndQuotesIdentifiers() throws {
        let schema = try SQLSchema(model: collidingModel)
        let statements = schema.createStatements()
        #expect(statements.contains { $0.contains("\"ZWE\"\"IRD\"") })
        // The subentity's uniqueness constraint must not constrain its sibling's rows.
        #expect(statements.contains { $0.hasPrefix("CREATE UNIQUE INDEX") && $0.hasSuffix("WHERE \"Z_ENT\" IN (1)") })
        let db = try database()
        try db.write { db in
            for statement in statements { try db.execute(sql: statement) }
            for statement in schema.createStatements(ifNotExists: true) { try db.execute(sql: statement) }
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            #expect(tables.contains("ZWE\"IRD"))
            #expect(tables.contains("Z_WE\"IRD_THINGS"))
        }
    }

    @Test func entityNumbersAreKeptAndNewEntitiesFollowThem() throws {
        // Without existing numbers: the held entities, 1… in name order.
        let partial = try SQLSchema(model: collidingModel, entityNames: ["We\"ird", "Sub2"])
        #expect(partial.entityNumberMap == ["Sub2": 1, "We\"ird": 2])
        #expect(partial.entityNumber(of: "Thing") == nil)

        // Existing numbers are kept whatever their order; new entities (even
        // one sorting first) get the next ones in name order, above every
        // existing number (a number of an entity no longer held is not reused).
        let extended = ObjectModel(entities: collidingModel.entities + [
            EntityDescription(name: "AAA", attributes: [attribute("x", .string)]),
            EntityDescription(name: "Zed"),
        ])
        let existing: [String: Int64] = ["Sub1": 7, "Sub2": 3, "Thing": 5, "We\"ird": 1, "Gone": 9]
        let schema = try SQLSchema(model: extended, entityNumbers: existing)
        #expect(schema.entityNumberMap == ["Sub1": 7, "Sub2": 3, "Thing": 5, "We\"ird": 1, "AAA": 10, "Zed": 11])
        #expect(schema.entityName(forNumber: 7) == "Sub1")
        #expect(schema.entityName(forNumber: 10) == "AAA")
        #expect(schema.entityName(forNumber: 9) == nil)
        // Indexes and queries use the kept numbers.
        #expect(schema.createStatements().contains { $0.hasPrefix("CREATE UNIQUE INDEX") && $0.hasSuffix("WHERE \"Z_ENT\" IN (7)") })
        let query = try SQLQueryCompiler(schema: schema).primaryKeyQuery(ResolvedFetch(entityName: "Sub1"))
        #expect(query.sql.contains("\"Z_ENT\" IN (?)"))
        #expect(query.arguments == [.integer(7)])
        // The same numbers give the same layout.
        #expect(try SQLSchema(model: extended, entityNumbers: schema.entityNumberMap).createStatements() == schema.createStatements())

        // Numbers that are not positive, or shared, are refused.
        for bad: [String: Int64] in [["Sub1": 0], ["Sub1": 2, "Sub2": 2], ["Thing": -1]] {
            do {
                _ = try SQLSchema(model: collidingModel, entityNumbers: bad)
                Issue.record("\(bad) was accepted")
            } catch {
                #expect(error.code == .invalidValue, "\(error)")
            }
        }
    }

    @Test func reservedNamesAreNeverProduced() throws {
        #expect(SQLSchema.isReserved("Z_METADATA"))
        #expect(SQLSchema.isReserved("z_metadata"))
        #expect(SQLSchema.isReserved("Z_PrimaryKey"))
        #expect(SQLSchema.isReserved("Z_STRATA_MIGRATING_1"))
        #expect(SQLSchema.isReserved("z_strata_anything"))
        #expect(!SQLSchema.isReserved("Z_METADATA_2"))
        #expect(!SQLSchema.isReserved("ZMETADATA"))
        #expect(!SQLSchema.isReserved("Z__STRATA_X"))

        let model = ObjectModel(entities: [
            EntityDescription(name: "_METADATA", attributes: [attribute("value", .string, indexed: true)]),
            EntityDescription(name: "_metadata", attributes: [attribute("value", .string)]),
            EntityDescription(name: "_PRIMARYKEY", attributes: [attribute("_STRATA_TEMP", .string)]),
            EntityDescription(name: "_STRATA_MIGRATING_1", attributes: [attribute("_strata_migrating_1", .string)], relationships: [
                RelationshipDescription(name: "owner", destination: "_PRIMARYKEY"),
            ]),
            EntityDescription(name: "STRATA", relationships: [RelationshipDescription(name: "x", destination: "_METADATA", toMany: true)]),
        ])
        let schema = try SQLSchema(model: model)
        let names = schema.tables.map(\.name) + schema.joinTables.map(\.name) + schema.indexes.map(\.name)
        for name in names { #expect(!SQLSchema.isReserved(name), "\(name)") }
        #expect(Set(names.map { $0.lowercased() }).count == names.count)
        for table in schema.tables {
            for column in table.columns { #expect(!column.name.lowercased().hasPrefix("z_strata_"), "\(table.name).\(column.name)") }
        }
        #expect(schema.table(for: "_METADATA")?.name == "Z_METADATA_2")
        #expect(schema.table(for: "_metadata")?.name == "Z_METADATA_3")
        #expect(schema.table(for: "_PRIMARYKEY")?.name == "Z_PRIMARYKEY_2")
        #expect(schema.table(for: "_STRATA_MIGRATING_1")?.name == "Z__STRATA_MIGRATING_1")
        #expect(schema.column(forAttribute: "_STRATA_TEMP", in: "_PRIMARYKEY") == "Z__STRATA_TEMP")
        #expect(schema.joinTables.map(\.name) == ["Z__STRATA_X"])

        // The DDL runs beside the store's own tables.
        let db = try database()
        try db.write { db in
            try db.execute(sql: "CREATE TABLE \"Z_METADATA\" (\"Z_KEY\" TEXT PRIMARY KEY, \"Z_VALUE\" BLOB)")
            try db.execute(sql: "CREATE TABLE \"Z_PRIMARYKEY\" (\"Z_NAME\" TEXT PRIMARY KEY, \"Z_MAX\" INTEGER NOT NULL)")
            for statement in schema.createStatements() { try db.execute(sql: statement) }
        }
    }

    @Test func invalidIndexesAndEntitiesAreReported() {
        let model = ObjectModel(entities: [
            EntityDescription(name: "A", attributes: [attribute("x", .string)], fetchIndexes: [FetchIndex(name: "bad", elements: [.init(property: "nope")])]),
        ])
        #expect(throws: StrataError.self) { _ = try SQLSchema(model: model) }
        #expect(throws: StrataError.self) { _ = try SQLSchema(model: M.model, entityNames: ["Missing"]) }
    }

    @Test func relationshipStorage() throws {
        let model = ObjectModel(entities: [
            EntityDescription(name: "Person", attributes: [attribute("name", .string)], relationships: [
                RelationshipDescription(name: "friends", destination: "Person", inverse: "friendOf", toMany: true, ordered: true),
                RelationshipDescription(name: "friendOf", destination: "Person", inverse: "friends", toMany: true),
                RelationshipDescription(name: "bookmarks", destination: "Note", toMany: true),
                RelationshipDescription(name: "notes", destination: "Note", inverse: "owner", toMany: true, ordered: true),
                RelationshipDescription(name: "cache", destination: "Note", toMany: true, transient: true),
                RelationshipDescription(name: "elsewhere", destination: "Remote", toMany: true),
            ]),
            EntityDescription(name: "Note", relationships: [
                RelationshipDescription(name: "owner", destination: "Person", inverse: "notes"),
            ]),
            EntityDescription(name: "Remote"),
        ])
        let schema = try SQLSchema(model: model, entityNames: ["Person", "Note"])
        guard case .joinTable(let t1, let s1, let d1, let o1)? = schema.storage(ofRelationship: "friends", in: "Person"),
              case .joinTable(let t2, let s2, let d2, let o2)? = schema.storage(ofRelationship: "friendOf", in: "Person") else {
            Issue.record("friends/friendOf should share a join table")
            return
        }
        #expect(t1 == t2 && s1 == d2 && d1 == s2)
        #expect((o1 == nil) != (o2 == nil))
        guard case .joinTable(let t3, _, _, nil)? = schema.storage(ofRelationship: "bookmarks", in: "Person") else {
            Issue.record("bookmarks has no inverse: a join table of its own")
            return
        }
        #expect(t3 != t1)
        guard case .inverseForeignKey(let table, let column, let order?)? = schema.storage(ofRelationship: "notes", in: "Person"),
              case .foreignKey(table, column)? = schema.storage(ofRelationship: "owner", in: "Note") else {
            Issue.record("notes is read through Note.owner's foreign key")
            return
        }
        #expect(schema.table(for: "Note")?.columns.contains { $0.name == order } == true)
        #expect(schema.storage(ofRelationship: "cache", in: "Person") == .transient)
        #expect(schema.storage(ofRelationship: "elsewhere", in: "Person") == .external)
        let db = try database()
        try db.write { db in for statement in schema.createStatements() { try db.execute(sql: statement) } }
    }

    // MARK: - Compiler

    @Test func valuesAreAlwaysBound() throws {
        let schema = try SQLSchema(model: M.model)
        let evil = "x'); DROP TABLE \"ZBOOK\"; --"
        let fetch = ResolvedFetch(
            entityName: "EBook",
            predicate: .and([
                M.compare(M.key("Book", "title"), .equal, .string(evil), .string, .caseInsensitive),
                M.list(M.key("Book", "pages"), .in, [.integer(1234567), .null], .integer),
                M.compare(M.key("Book", "price"), .greaterThan, .decimal(Decimal(string: "98765.4321")!), .decimal),
            ]),
            sortKeys: [M.sort("Book", "author.name", caseInsensitive: true)],
            limit: 3, offset: 2
        )
        let query = try SQLQueryCompiler(schema: schema).primaryKeyQuery(fetch)
        #expect(!query.sql.contains("DROP"))
        #expect(!query.sql.contains("1234567"))
        #expect(!query.sql.contains("98765"))
        #expect(query.sql.contains("\"Z_ENT\" IN (?)"))
        #expect(query.sql.contains("LEFT JOIN \"ZAUTHOR\""))
        #expect(query.sql.hasSuffix("LIMIT ? OFFSET ?"))
        #expect(query.arguments.count == query.sql.filter { $0 == "?" }.count)
        #expect(query.arguments.contains(.text(StringFolding.fold(evil, .caseInsensitive))))
        #expect(query.arguments.contains(.integer(Int64(schema.entityNumber(of: "EBook")!))))
        let fixture = try QueryFixture()
        #expect(try fixture.sql(fetch).isEmpty)
    }

    @Test func unsupportedConstructsAreNamed() throws {
        let schema = try SQLSchema(model: M.model)
        let compiler = SQLQueryCompiler(schema: schema)
        func code(_ predicate: QueryPredicate, entity: String = "Book", sort: [QuerySortKey] = []) -> StrataError.Code? {
            do {
                _ = try compiler.primaryKeyQuery(ResolvedFetch(entityName: entity, predicate: predicate, sortKeys: sort))
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code(M.compare(.function(.canonical, [M.key("Book", "title")]), .equal, .string("x"), .string)) == .unsupported)
        #expect(code(M.compare(M.key("Book", "notes"), .equal, .string("x"), .string)) == .unsupported)
        #expect(code(.constant(true), sort: [M.sort("Book", "notes")]) == .unsupported)
        #expect(code(M.compare(M.key("Book", "title"), .matches, .string("(("), .string)) == .predicateType)
        #expect(code(M.compare(M.key("Book", "title"), .equal, .integer(1), .integer)) == .predicateType)
        let partial = try SQLSchema(model: M.model, entityNames: ["Author"])
        do {
            _ = try SQLQueryCompiler(schema: partial).primaryKeyQuery(ResolvedFetch(entityName: "Book"))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unsupported)
            #expect(error.message.contains("Book"))
        }
        // Paths into entities another store holds are always nil / empty.
        let query = try SQLQueryCompiler(schema: partial).primaryKeyQuery(ResolvedFetch(
            entityName: "Author",
            predicate: .and([
                M.compare(.aggregate(.count, M.collection("Author", "books"), nil), .equal, .integer(0), .integer),
                .quantified(.all, M.collection("Author", "books"), .constant(false)),
            ])
        ))
        let db = try database()
        try db.write { db in
            for statement in partial.createStatements() { try db.execute(sql: statement) }
            try db.execute(sql: "INSERT INTO \"ZAUTHOR\" (\"Z_PK\", \"Z_ENT\", \"Z_OPT\") VALUES (1, 1, 1)")
            #expect(try Int64.fetchAll(db, sql: query.sql, arguments: query.statementArguments) == [1])
        }
    }

    @Test func sqliteNullOrderMatchesTheEvaluator() throws {
        let db = try database()
        try db.write { db in
            try db.execute(sql: "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
            try db.execute(sql: "INSERT INTO t VALUES (1, 'b'), (2, NULL), (3, 'a'), (4, NULL)")
            #expect(try Int64.fetchAll(db, sql: "SELECT k FROM t ORDER BY v ASC, k ASC") == [2, 4, 3, 1])
            #expect(try Int64.fetchAll(db, sql: "SELECT k FROM t ORDER BY v DESC, k ASC") == [1, 3, 2, 4])
        }
    }

    @Test func registeredFunctions() throws {
        let db = try database()
        try db.read { (db: Database) throws -> Void in
            #expect(try String.fetchOne(db, sql: "SELECT strata_fold(?, 3)", arguments: ["Crème BRÛLÉE"]) == "creme brulee")
            #expect(try Int.fetchOne(db, sql: "SELECT strata_fold(42, 3)") == 42)
            #expect(try Int.fetchOne(db, sql: "SELECT strata_strop(1, 'abc', 'ab')") == 1)
            #expect(try Int.fetchOne(db, sql: "SELECT strata_strop(2, 'abc', 'ab')") == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT strata_strop(3, 'abc', NULL)") == nil)
            #expect(try Int.fetchOne(db, sql: "SELECT strata_like('e\u{301}x', '?x')") == 1)
            #expect(try Int.fetchOne(db, sql: "SELECT strata_matches('apple', 'a|apple', 0)") == 1)
            #expect(try Int.fetchOne(db, sql: "SELECT strata_matches('APPLE', 'apple', 1)") == 1)
            #expect(try String.fetchOne(db, sql: "SELECT strata_decimal_key(0.1)") == DecimalKey.encode(Decimal(string: "0.1")!))
            #expect(try String.fetchOne(db, sql: "SELECT strata_decimal_key(-12)") == DecimalKey.encode(Decimal(-12)))
            #expect(try Double.fetchOne(db, sql: "SELECT strata_fsum(x) FROM (SELECT 0.1 AS x UNION ALL SELECT 0.2 UNION ALL SELECT NULL)") == 0.30000000000000004)
            #expect(try Double.fetchOne(db, sql: "SELECT strata_fsum(x) FROM (SELECT 1 AS x) WHERE 0") == 0)
            let k1 = DecimalKey.encode(Decimal(string: "0.1")!) ?? ""
            let k2 = DecimalKey.encode(Decimal(string: "0.2")!) ?? ""
            #expect(try String.fetchOne(db, sql: "SELECT strata_decimal_sum(x) FROM (SELECT ? AS x UNION ALL SELECT ?)", arguments: [k1, k2]) == DecimalKey.encode(Decimal(string: "0.3")!))
            #expect(try String.fetchOne(db, sql: "SELECT strata_decimal_sum(x) FROM (SELECT 1 AS x) WHERE 0") == DecimalKey.zero)
            #expect(try String.fetchOne(db, sql: "SELECT strata_decimal_avg(x) FROM (SELECT ? AS x UNION ALL SELECT ?)", arguments: [k1, k2]) == DecimalKey.encode(Decimal(string: "0.15")!))
            #expect(try String.fetchOne(db, sql: "SELECT strata_decimal_avg(x) FROM (SELECT 1 AS x) WHERE 0") == nil)
            do {
                _ = try Int.fetchOne(db, sql: "SELECT strata_matches('x', '(', 0)")
                Issue.record("expected an error")
            } catch {
                let strata = SQLiteFunctions.strataError(from: error)
                #expect(strata?.code == .predicateType)
                #expect(strata?.message.contains("'('") == true)
            }
        }
    }

    @Test func rowAndCountQueries() throws {
        let fixture = try QueryFixture()
        let compiler = SQLQueryCompiler(schema: fixture.schema)
        let fetch = ResolvedFetch(entityName: "EBook", sortKeys: [M.sort("EBook", "pages"), M.sort("EBook", "title")], limit: 10, offset: 4)
        let rows = try compiler.rowQuery(fetch)
        let count = try compiler.countQuery(fetch)
        let table = try #require(fixture.schema.table(for: "EBook"))
        try fixture.database.read { db in
            let fetched = try Row.fetchAll(db, sql: rows.sql, arguments: rows.statementArguments)
            #expect(fetched.count == 10)
            #expect(try Int.fetchOne(db, sql: count.sql, arguments: count.statementArguments) == 10)
            for row in fetched {
                let pk: Int64 = row["Z_PK"]
                let record = try #require(fixture.data.all("EBook").first { $0.primaryKey == pk })
                for attribute in M.model.attributes(of: "EBook") where !attribute.isTransient {
                    let column = try #require(fixture.schema.column(forAttribute: attribute.name, in: "EBook"))
                    let stored: DatabaseValue = row[column]
                    let decoded = try SQLiteValueCoding.propertyValue(from: stored, type: attribute.type)
                    #expect(decoded == record[attribute.name], "\(attribute.name)")
                }
                #expect(table.columns.count == row.count)
            }
        }
        #expect(try fixture.memory(fetch) == fixture.sql(fetch))
    }

    @Test func runtimeRegexErrorFromDataMapsBack() throws {
        let fixture = try QueryFixture()
        try fixture.database.write { db in
            try db.execute(sql: "UPDATE \"ZTAG\" SET \"ZNAME\" = '(' WHERE \"Z_PK\" = 1")
        }
        let fetch = ResolvedFetch(entityName: "Tag", predicate: M.compare(M.key("Tag", "name"), .matches, M.key("Tag", "name"), .string))
        do {
            _ = try fixture.sql(fetch)
            Issue.record("expected an error")
        } catch {
            #expect(SQLiteFunctions.strataError(from: error)?.code == .predicateType)
        }
    }
}
