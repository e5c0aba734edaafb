import Foundation
import Logging
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
    /// given) for unqualified names and `extra_float_digits` = 1 (Doubles
    /// written as text in their shortest exact form), and names itself
    /// `strata` to the server. An unreadable root certificate file is
    /// 134080.
    package func clientConfiguration(password: String?, searchPath: String? = nil) throws(StrataError) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = try tlsConfiguration().map { .require($0) } ?? .disable
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = poolSize
        configuration.options.additionalStartupParameters = startupParameters(searchPath: searchPath)
        return configuration
    }

    /// Connects once, and closes: 134080 saying why when the server cannot
    /// be reached, refuses the user or password, or fails TLS. A pool
    /// retries a connection that fails; opening a store asks this first,
    /// so that a wrong address, password or certificate fails at once.
    package func probe(password: String?, logger: Logger, timeout: TimeAmount = .seconds(10)) async throws(StrataError) {
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
        configuration.options.additionalStartupParameters = startupParameters(searchPath: nil)
        do {
            let connection = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 0, logger: logger).get()
            try? await connection.close()
        } catch {
            throw StrataError(.storeOpen, "cannot connect to PostgreSQL at \(host):\(port), database \(database), as \(user): \(Self.reason(error))")
        }
    }

    /// Why a connection failed, in words: the server's message, or the
    /// underlying error (refused, TLS verification…).
    static func reason(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] {
            return message + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }

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

    private func startupParameters(searchPath: String?) -> [(String, String)] {
        // Quoted: unquoted names in search_path are folded to lower case.
        [("search_path", "\"\(searchPath ?? schema)\""), ("extra_float_digits", "1"), ("application_name", "strata")]
    }
}
