import Foundation
import Testing
import StrataPostgresTesting

extension ToolTests {
    /// `strata-server` serving stores kept in PostgreSQL
    /// (`--store CONFIG=postgres:URL`), run as users run it. Skipped, saying
    /// why, where no PostgreSQL server is configured; CI always has one.
    @Suite("PostgreSQL stores", .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipComment)), .timeLimit(.minutes(2)))
    struct PostgresServerTests {
        /// The `--store` options of the sample's two configurations, each in
        /// its own fresh schema.
        static func storeOptions(readOnly: Bool = false, schemas: (String, String)? = nil) throws -> (options: [String], schemas: (String, String)) {
            let base = try #require(PostgresTestServer.url, "STRATA_POSTGRES_URL")
            let names = schemas ?? (PostgresTestServer.uniqueSchemaName("srv"), PostgresTestServer.uniqueSchemaName("srv"))
            let type = readOnly ? "postgres+readonly" : "postgres"
            return (["--store", "Book=\(type):\(base)?schema=\(names.0)", "--store", "Feedback=\(type):\(base)?schema=\(names.1)"], names)
        }

        @Test("Serves the sample from PostgreSQL: saves, fetches with [c], counts; /ready checks the database")
        func servesFromPostgres() async throws {
            let (options, _) = try Self.storeOptions()
            let server = try LiveServer.start(options + ["--admin-port", "0"])
            defer { server.stop() }
            let cli = CLI(server: server)
            let id = try cli.insertBook("Crème Brûlée", ["pages=120", "price=12.50"])
            #expect(id.hasPrefix("strata://"))
            _ = try cli.insertBook("Other", ["pages=10"])
            let fetched = try cli.succeed(["fetch", "Book", "--where", "title ==[cd] 'creme brulee'"])
            #expect(fetched.contains("Crème Brûlée") && fetched.contains("12.5") && !fetched.contains("Other"), "\(fetched)")
            #expect(try cli.succeed(["count", "Book", "--where", "pages > 50"]).trimmingCharacters(in: .whitespacesAndNewlines) == "1")
            let port = try #require(AdminEndpointTests.adminPort(in: server.log), "\(server.log)")
            #expect(try await AdminEndpointTests.get(port, "/ready") == (200, "ready\n"))
        }

        @Test("A second server, read-only (postgres+readonly:), reads the first one's objects and refuses writes")
        func readOnlySecondServer() throws {
            let (options, schemas) = try Self.storeOptions()
            let writer = try LiveServer.start(options)
            defer { writer.stop() }
            _ = try CLI(server: writer).insertBook("Shared")
            let reader = try LiveServer.start(try Self.storeOptions(readOnly: true, schemas: schemas).options)
            defer { reader.stop() }
            let cli = CLI(server: reader)
            #expect(try cli.succeed(["fetch", "Book"]).contains("Shared"))
            let refused = try cli.run(["insert", "Book", "uuid=\(UUID().uuidString)", "title=No"])
            #expect(refused.status != 0, "\(refused.stdout)")
        }
    }
}
