import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import StrataModel

extension PostgresStoreURL {
    /// The postgres-nio client configuration of this store: its host, user
    /// and database, `password`, a pool of ``poolSize`` connections, and
    /// TLS as ``tlsMode`` says:
    /// - `disable`: none;
    /// - `require`: TLS required, the server's certificate not verified
    ///   (libpq's `require`);
    /// - `verify-full`: TLS required, the chain verified against
    ///   ``rootCertificatePath`` (else the system's roots) and the host
    ///   name or address against the certificate.
    ///
    /// Every session uses `searchPath` (the store's ``schema`` unless
    /// given) for unqualified names, `extra_float_digits` = 1 (Doubles
    /// written as text in their shortest exact form) and
    /// `standard_conforming_strings` (backslashes in literals are
    /// backslashes, as the regular expressions Strata writes need), and names itself
    /// `strata` to the server; with `lockTimeout`, a wait for another
    /// session's row lock fails past it. An unreadable root certificate
    /// file is 134080.
    package func clientConfiguration(password: String?, searchPath: String? = nil, lockTimeout: Duration? = nil) throws(StrataError) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = try tlsConfiguration().map { .require($0) } ?? .disable
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = poolSize
        configuration.options.additionalStartupParameters = startupParameters(searchPath: searchPath)
        if let lockTimeout {
            // Milliseconds; a wait for another session's row lock longer than this fails (55P03).
            let milliseconds = max(1, lockTimeout.components.seconds * 1000 + lockTimeout.components.attoseconds / 1_000_000_000_000_000)
            configuration.options.additionalStartupParameters.append(("lock_timeout", String(milliseconds)))
        }
        return configuration
    }

    /// Connects once, and closes: 134080 saying why when the server cannot
    /// be reached, refuses the user or password, or fails TLS. A pool
    /// retries a connection that fails; opening a store asks this first,
    /// so that a wrong address, password or certificate fails at once.
    package func probe(password: String?, logger: Logger, timeout: TimeAmount = .seconds(10)) async throws(StrataError) {
        let configuration = try connectionConfiguration(password: password, timeout: timeout)
        // The connect timeout covers the TCP connection only: the whole
        // start-up (TLS, authentication) has the same deadline, and a
        // connection that completes after it is closed.
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let outcome = eventLoop.makePromise(of: Void.self)
        let settled = NIOLockedValueBox(false)
        let deadline = eventLoop.scheduleTask(in: timeout) {
            if settled.withLockedValue({ done in defer { done = true }; return !done }) {
                outcome.fail(ProbeTimeout())
            }
        }
        PostgresConnection.connect(on: eventLoop, configuration: configuration, id: 0, logger: logger).whenComplete { result in
            deadline.cancel()
            let first = settled.withLockedValue { done in defer { done = true }; return !done }
            switch result {
            case .success(let connection):
                // The closure holds the connection until it is closed
                // (released before, it would be freed while still open).
                connection.close().whenComplete { _ in
                    withExtendedLifetime(connection) {}
                    if first { outcome.succeed(()) }
                }
            case .failure(let error):
                if first { outcome.fail(error) }
            }
        }
        do {
            try await outcome.futureResult.get()
        } catch is ProbeTimeout {
            throw StrataError(.storeOpen, "cannot connect to PostgreSQL at \(host):\(port), database \(database), as \(user): no answer within \(timeout.nanoseconds / 1_000_000) ms")
        } catch let error as PSQLError where error.code == .authMechanismRequiresPassword && password == nil {
            throw StrataError(.storeOpen, "cannot connect to PostgreSQL at \(host):\(port), database \(database), as \(user): the server asks for a password and none is given (set PGPASSWORD, or passfile= in the URL: a file only its owner can read, holding the password)")
        } catch {
            throw StrataError(.storeOpen, "cannot connect to PostgreSQL at \(host):\(port), database \(database), as \(user): \(PostgresErrors.reason(error))")
        }
    }

    /// The configuration of one connection outside the pool (the probe's,
    /// a change watcher's), with the pool's TLS and session settings, named
    /// `applicationName` to the server (`pg_stat_activity` shows it).
    package func connectionConfiguration(password: String?, timeout: TimeAmount = .seconds(10), applicationName: String = "strata") throws(StrataError) -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        if let configuration = try tlsConfiguration() {
            do {
                tls = .require(try NIOSSLContext(configuration: configuration))
            } catch {
                throw StrataError(.storeOpen, "TLS to PostgreSQL at \(host):\(port) cannot be set up: \(error)")
            }
        } else {
            tls = .disable
        }
        var configuration = PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = timeout
        configuration.options.additionalStartupParameters = startupParameters(searchPath: nil, applicationName: applicationName)
        return configuration
    }

    /// The probe's deadline passed.
    private struct ProbeTimeout: Error {}

    /// The TLS configuration ``tlsMode`` asks for; nil for none.
    private func tlsConfiguration() throws(StrataError) -> TLSConfiguration? {
        switch tlsMode {
        case .disable:
            return nil
        case .require:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            return configuration
        case .verifyFull:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .fullVerification
            if let rootCertificatePath {
                do {
                    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCertificatePath))
                } catch {
                    throw StrataError(.storeOpen, "the PostgreSQL root certificate file \(rootCertificatePath) cannot be read as PEM certificates: \(error)")
                }
            }
            return configuration
        }
    }

    private func startupParameters(searchPath: String?, applicationName: String = "strata") -> [(String, String)] {
        // Quoted: unquoted names in search_path are folded to lower case.
        [("search_path", "\"\(searchPath ?? schema)\""), ("extra_float_digits", "1"), ("standard_conforming_strings", "on"), ("application_name", applicationName)]
    }
}
