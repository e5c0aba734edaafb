import Foundation
import Logging
import PostgresNIO
import StrataModel
@testable import StrataQuery
import StrataPostgres
import StrataPostgresTesting

/// The fixture graph of ``QueryFixture`` in a PostgreSQL schema of its own
/// (tables from ``PostgresSchema``, rows and companions written as the
/// PostgreSQL store writes them), shared by every test of the process.
final class PostgresQueryFixture: Sendable {
    let data: FixtureData
    let model: ObjectModel
    let schema: PostgresSchema
    let client: PostgresClient
    let accessor: FixtureAccessor

    private static let loading = FixtureLoading()

    /// The process's fixture, made on first use.
    static func shared() async throws -> PostgresQueryFixture {
        try await loading.fixture()
    }

    private actor FixtureLoading {
        private var task: Task<PostgresQueryFixture, any Error>?

        func fixture() async throws -> PostgresQueryFixture {
            if let task { return try await task.value }
            let task = Task { try await PostgresQueryFixture.make() }
            self.task = task
            return try await task.value
        }
    }

    private init(data: FixtureData, model: ObjectModel, schema: PostgresSchema, client: PostgresClient) {
        self.data = data
        self.model = model
        self.schema = schema
        self.client = client
        self.accessor = FixtureAccessor(data: data)
    }

    private static func make() async throws -> PostgresQueryFixture {
        let data = FixtureData.shared
        let model = FixtureModel.model
        let schema = try PostgresSchema(layout: try SQLSchema(model: model))
        let name = PostgresTestServer.uniqueSchemaName("strata_agreement")
        let client = PostgresClient(configuration: try PostgresTestServer.configuration(searchPath: name), backgroundLogger: Logger(label: "strata.tests.postgres"))
        // Runs for the rest of the process, as the fixture is shared.
        Task { await client.run() }
        let fixture = PostgresQueryFixture(data: data, model: model, schema: schema, client: client)
        try await PostgresTestServer.dropAbandonedSchemas("strata_agreement", client: client)
        try await fixture.load(schemaName: name)
        return fixture
    }

    private func load(schemaName: String) async throws {
        try await client.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(SQLSchema.quote(schemaName))"))
        for statement in schema.createStatements() {
            try await client.query(PostgresQuery(unsafeSQL: statement))
        }
        for row in FixtureRows.rows(data, layout: schema.layout, model: model) {
            var names: [String] = []
            var values: [SQLValue] = []
            for (column, value) in row.cells {
                names.append(column)
                values.append(value)
                // Beside each string column, its companions.
                guard let table = schema.layout.tables.first(where: { $0.name == row.table }),
                      let described = table.columns.first(where: { $0.name == column }), schema.isText(described) else { continue }
                names += PostgresCompanion.all.map { $0.column(column) }
                values += PostgresCompanion.values(value)
            }
            try await insert(into: row.table, names, values)
        }
    }

    private func insert(into table: String, _ names: [String], _ values: [SQLValue]) async throws {
        let placeholders = (1...values.count).map { "$\($0)" }.joined(separator: ", ")
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { try PostgresValueCoding.append(value, to: &bindings) }
        let sql = "INSERT INTO \(SQLSchema.quote(table)) (\(names.map(SQLSchema.quote).joined(separator: ", "))) VALUES (\(placeholders))"
        try await client.query(PostgresQuery(unsafeSQL: sql, binds: bindings))
    }

    /// The fetch run in memory: primary keys in result order.
    func memory(_ fetch: ResolvedFetch) throws -> [Int64] {
        let results = try FetchEvaluator.run(fetch, model: model, over: data.records.indices, accessor: accessor)
        return results.map { data.records[$0].primaryKey }
    }

    /// The fetch compiled to PostgreSQL's SQL and run: primary keys in
    /// result order (checking on the way that the count query agrees).
    func sql(_ fetch: ResolvedFetch) async throws -> [Int64] {
        let compiler = SQLQueryCompiler(postgres: schema)
        let query = try compiler.primaryKeyQuery(fetch)
        let count = try compiler.countQuery(fetch)
        var keys: [Int64] = []
        var counted = -1
        do {
            for try await (key, _) in try await client.query(PostgresValueCoding.query(query)).decode((Int64, Int64).self) {
                keys.append(key)
            }
            for try await (value) in try await client.query(PostgresValueCoding.query(count)).decode(Int64.self) {
                counted = Int(value)
            }
        } catch let error as PSQLError {
            // A test's own failure: the server's message and the SQL.
            throw StrataError(.storeOpen, "PostgreSQL refused the compiled SQL: \(error.serverInfo?[.message] ?? String(reflecting: error))\nSQL: \(query.sql)\ncount: \(count.sql)")
        }
        guard counted == keys.count else {
            // Not .unsupported: that is how a refusal is told apart.
            throw StrataError(.invalidValue, "count query gave \(counted) for \(keys.count) rows")
        }
        return keys
    }
}
