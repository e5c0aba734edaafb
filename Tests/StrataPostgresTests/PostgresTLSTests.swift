import Foundation
import Logging
import NIOPosix
import PostgresNIO
import StrataModel
import StrataPostgresTesting
import StrataTestCertificates
import Testing
@testable import StrataPostgres

/// TLS to PostgreSQL as the store URL asks for it, against the test server
/// (which offers TLS with a certificate for 127.0.0.1 from its own CA).
@Suite(.enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipComment)), .timeLimit(.minutes(1)))
struct PostgresTLSTests {
    /// Whether the session `url` (with `parameters` added) opens is encrypted.
    static func encrypted(_ parameters: String) async throws -> Bool {
        let base = try #require(PostgresTestServer.url)
        let location = try PostgresStoreURL(base + (base.contains("?") ? "&" : "?") + parameters)
        let client = PostgresClient(configuration: try location.clientConfiguration(password: try location.password()), backgroundLogger: Logger(label: "strata.tests.postgres"))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            var encrypted = false
            for try await value in try await client.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").decode(Bool.self) {
                encrypted = value
            }
            return encrypted
        }
    }

    @Test("verify-full against the server's CA, and require, encrypt; disable does not")
    func modes() async throws {
        let ca = try #require(PostgresTestServer.caFile, "the test server was started without TLS (Tools/postgres/test-server.sh offers it)")
        #expect(try await Self.encrypted("sslmode=verify-full&sslrootcert=\(ca)"))
        #expect(try await Self.encrypted("sslmode=require"))
        #expect(try await Self.encrypted("sslmode=disable") == false)
    }

    @Test("verify-full refuses a server its CA did not sign, and an unreadable CA file is 134080")
    func verificationFails() async throws {
        _ = try #require(PostgresTestServer.caFile, "the test server was started without TLS (Tools/postgres/test-server.sh offers it)")
        let certificates = try TestCertificates()
        defer { certificates.remove() }
        let base = try #require(PostgresTestServer.url)
        let wrongCA = try PostgresStoreURL(base + "?sslmode=verify-full&sslrootcert=\(certificates.otherCAFile)")
        do {
            try await wrongCA.probe(password: try wrongCA.password(), logger: Logger(label: "strata.tests.postgres"))
            Issue.record("connected to a server the CA did not sign")
        } catch {
            #expect(error.code == .storeOpen)
            #expect(error.message.contains("cannot connect to PostgreSQL at 127.0.0.1"), "\(error.message)")
        }
        // The right CA connects.
        let rightCA = try PostgresStoreURL(base + "?sslmode=verify-full&sslrootcert=\(try #require(PostgresTestServer.caFile))")
        try await rightCA.probe(password: try rightCA.password(), logger: Logger(label: "strata.tests.postgres"))
        // A peer that accepts and never answers: refused at the deadline.
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        defer { silent.close(promise: nil) }
        let silentPort = try #require(silent.localAddress?.port)
        let hanging = try PostgresStoreURL("postgresql://me@127.0.0.1:\(silentPort)/db")
        let started = ContinuousClock.now
        do {
            try await hanging.probe(password: nil, logger: Logger(label: "strata.tests.postgres"), timeout: .milliseconds(300))
            Issue.record("a silent peer passed the probe")
        } catch {
            #expect(error.message.contains("no answer within 300 ms"), "\(error.message)")
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        // A wrong password is said at once.
        await #expect(throws: StrataError.self) {
            try await rightCA.probe(password: "wrong", logger: Logger(label: "strata.tests.postgres"))
        }
        // No password at all: the error says where one comes from.
        do {
            try await rightCA.probe(password: nil, logger: Logger(label: "strata.tests.postgres"))
            Issue.record("a connection without a password was accepted")
        } catch {
            #expect(error.message.contains("PGPASSWORD") && error.message.contains("passfile"), "\(error.message)")
        }
        let location = try PostgresStoreURL("postgresql://me@127.0.0.1/db?sslmode=verify-full&sslrootcert=\(certificates.directory.path)/none.pem")
        #expect(throws: StrataError.self) { try location.clientConfiguration(password: nil) }
    }
}
