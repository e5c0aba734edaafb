import Foundation
import Logging
import PostgresNIO
import StrataModel
import StrataPostgres
import StrataQuery
import NIOConcurrencyHelpers

/// The PostgreSQL server the PostgreSQL suites use: the one
/// `STRATA_POSTGRES_URL` names (with `PGPASSWORD`), as
/// `Tools/postgres/test-server.sh start` exports them; CI always starts one.
///
/// Without the variable, the suites are skipped with ``skipComment`` saying
/// so, except under CI (`CI` set), where they run and fail: CI must never
/// pass a PostgreSQL suite by skipping it.
public enum PostgresTestServer {
    /// The server's URL, if one is configured.
    public static var url: String? {
        ProcessInfo.processInfo.environment["STRATA_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether a server is required (CI).
    public static var isRequired: Bool {
        !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty
    }

    /// The CA certificate that signed the server's (TLS), if it offers TLS.
    public static var caFile: String? {
        ProcessInfo.processInfo.environment["STRATA_POSTGRES_CA"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the PostgreSQL suites run here.
    public static var isEnabled: Bool { url != nil || isRequired }

    /// Why they do not.
    public static let skipComment = "no PostgreSQL server: STRATA_POSTGRES_URL is not set (eval \"$(Tools/postgres/test-server.sh start)\" to run these suites)"

    /// A client configuration for the server, whose sessions use
    /// `searchPath` for unqualified names.
    public static func configuration(searchPath: String? = nil) throws -> PostgresClient.Configuration {
        guard let url else {
            throw StrataError(.storeOpen, "CI is set but STRATA_POSTGRES_URL is not: .ci/run starts a PostgreSQL server and exports it")
        }
        var location = try PostgresStoreURL(url)
        location.poolSize = 4
        return try location.clientConfiguration(password: try location.password(), searchPath: searchPath ?? "public")
    }

    /// Runs `body` with a running client for the server; the client is shut
    /// down afterwards.
    public static func withClient<Result: Sendable>(
        searchPath: String? = nil,
        _ body: @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration: try configuration(searchPath: searchPath), backgroundLogger: Logger(label: "strata.tests.postgres"))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// A fresh schema name for this process:
    /// `prefix_<host hash>_<pid>_<random>`.
    public static func uniqueSchemaName(_ prefix: String) -> String {
        "\(prefix)_\(hostTag)_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
    }

    /// The schema name of `seed` in this process:
    /// `prefix_<host hash>_<pid>_<seed hash>`, the same for the same seed
    /// (a test reopening "its" store), dropped with the others of ended
    /// processes by ``dropAbandonedSchemas(_:client:)``.
    public static func schemaName(_ prefix: String, seed: String) -> String {
        "\(prefix)_\(hostTag)_\(getpid())_\(UInt32(truncatingIfNeeded: SQLStoreMetadata.fnv1a64(seed)))"
    }

    /// Drops the abandoned schemas of `prefix` once per process (errors
    /// ignored: a schema left behind costs nothing but space).
    public static func dropAbandonedSchemasOnce(_ prefix: String) async {
        let first = dropped.withLockedValue { names in names.insert(prefix).inserted }
        guard first, url != nil else { return }
        _ = try? await withClient { client in try await dropAbandonedSchemas(prefix, client: client) }
    }

    private static let dropped = NIOLockedValueBox<Set<String>>([])

    /// Ends every change watcher's session (`application_name`
    /// `strata-watcher`: what a network cut or a server-side kill does to
    /// them);
    /// answers how many were ended.
    @discardableResult
    public static func terminateListeners() async throws -> Int {
        try await withClient { client in
            var ended = 0
            let rows = try await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'strata-watcher'")
            for try await terminated in rows.decode(Bool.self) where terminated { ended += 1 }
            return ended
        }
    }

    /// This machine's name hashed (FNV-1a, 8 hex digits): schemas named on
    /// another machine (or in another PID namespace's host) are never
    /// taken for this one's.
    static let hostTag: String = {
        var name = [UInt8](repeating: 0, count: 256)
        _ = name.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return Int32(-1) }
                return gethostname(base, chars.count - 1)
            }
        }
        var hash: UInt32 = 0x811c_9dc5
        for byte in name.prefix(while: { $0 != 0 }) {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }()

    /// Drops the schemas ``uniqueSchemaName(_:)`` made for `prefix` in
    /// test processes of this machine that have ended (a test process
    /// cannot drop its own at exit). A server shared by containers that
    /// share a host name and not their processes would need more than this.
    public static func dropAbandonedSchemas(_ prefix: String, client: PostgresClient) async throws {
        var abandoned: [String] = []
        for try await name in try await client.query("SELECT nspname::text FROM pg_namespace").decode(String.self) {
            let parts = name.dropFirst(prefix.count + 1).split(separator: "_")
            guard name.hasPrefix(prefix + "_"), parts.count == 3, parts[0] == hostTag, let pid = Int32(parts[1]) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { abandoned.append(name) }
        }
        for name in abandoned {
            try await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(name)\" CASCADE"))
        }
    }
}
