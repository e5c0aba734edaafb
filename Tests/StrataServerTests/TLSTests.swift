import Foundation
import JWTKit
import Logging
import NIOConcurrencyHelpers
import NIOCore
import StrataAuth
import StrataClient
import StrataContext
import StrataSamples
@testable import StrataServer
import StrataStore
import StrataSQLite
import StrataTestCertificates
import StrataWire
import Testing

/// TLS, identities and the network-safety rule, through real sockets on
/// 127.0.0.1 with certificates made for the test.
@Suite("TLS, identities and safe defaults")
struct TLSTests {
    /// A server with TLS from `certificates`, requiring client certificates when asked.
    static func tlsServer(_ certificates: TestCertificates, requireClientCertificates: Bool = false, logger: Logger? = nil,
                          configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> TestServer {
        let tls = try ServerTLS(files: .init(certificateChain: certificates.serverCertificateFile, privateKey: certificates.serverKeyFile,
                                             clientCA: requireClientCertificates ? certificates.caFile : nil))
        return try await TestServer.start(logger: logger) {
            $0.tls = tls
            configure(&$0)
        }
    }

    @Test("A client trusting the server's CA talks over TLS; one trusting another CA, or none, is refused clearly and the server serves on")
    func serverAuthentication() async throws {
        let certificates = try TestCertificates()
        defer { certificates.remove() }
        let server = try await Self.tlsServer(certificates)
        let good = server.client("tls") { $0.tls = ClientTLS(trustedCA: certificates.caFile) }
        let hello = try await good.connect()
        #expect(hello.modelName == "BooksAndFeedback")
        _ = try await good.ping()

        let wrongCA = server.client("wrong-ca") { $0.tls = ClientTLS(trustedCA: certificates.otherCAFile) }
        let error = await #expect(throws: StrataClientError.self) { _ = try await wrongCA.connect() }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("TLS handshake with 127.0.0.1:\(server.port) failed") == true)

        // A certificate from the trusted CA, but for another host.
        let elsewhere = try certificates.server(namingOnly: "db.example.com")
        let misnamed = try await TestServer.start {
            $0.tls = try? ServerTLS(files: .init(certificateChain: elsewhere.certificate, privateKey: elsewhere.key))
        }
        let wrongName = misnamed.client("wrong-name") { $0.tls = ClientTLS(trustedCA: certificates.caFile) }
        let nameError = await #expect(throws: StrataClientError.self) { _ = try await wrongName.connect() }
        #expect(nameError?.message.contains("TLS handshake with 127.0.0.1:\(misnamed.port) failed") == true, "\(String(describing: nameError))")
        // Told the name it should carry, the same client connects.
        let named = misnamed.client("named") { $0.tls = ClientTLS(trustedCA: certificates.caFile, serverName: "db.example.com") }
        _ = try await named.ping()
        await named.close()
        try await misnamed.stop()

        // A plain client gets no answer it could mistake for the server's.
        let plain = server.client("plain") { $0.connectTimeout = .seconds(2) }
        await #expect(throws: StrataClientError.self) { _ = try await plain.connect() }

        // Over "localhost" too (SNI and the name check).
        let byName = StrataClient(configuration: ClientConfiguration(host: "localhost", port: server.port, tls: ClientTLS(trustedCA: certificates.caFile)))
        // localhost may resolve to ::1 first, which the server does not bind: only check when it connects.
        if (try? await byName.connect()) != nil { _ = try await byName.ping() }

        _ = try await good.ping()
        for client in [good, wrongCA, wrongName, plain, byName] { await client.close() }
        try await server.stop()
    }

    @Test("Mutual TLS: a certificate from the CA is required, and its common name is the identity of a hello without a token")
    func clientCertificates() async throws {
        let certificates = try TestCertificates()
        defer { certificates.remove() }
        let alice = try certificates.client("alice")
        let mallory = try certificates.client("mallory", selfSigned: true)
        let server = try await Self.tlsServer(certificates, requireClientCertificates: true) {
            $0.authenticator = Authenticator(.init(authFile: AuthFile(certificates: ["alice": Identity(subject: "alice", roles: ["editor"])])))
        }
        let client = server.client("alice-app") {
            $0.tls = ClientTLS(trustedCA: certificates.caFile, certificateChain: alice.certificate, privateKey: alice.key)
        }
        _ = try await client.connect()
        let saved = try await client.save(Wire.save(inserts: [Wire.insertBook("b", title: "By certificate")]))
        #expect(saved.inserted.count == 1)
        let history = try await client.history(store: "Book")
        #expect(history.transactions.last?.author == "alice")

        let noCertificate = server.client("anonymous") { $0.tls = ClientTLS(trustedCA: certificates.caFile) }
        await #expect(throws: StrataClientError.self) { _ = try await noCertificate.connect() }
        let untrusted = server.client("mallory") {
            $0.tls = ClientTLS(trustedCA: certificates.caFile, certificateChain: mallory.certificate, privateKey: mallory.key)
        }
        await #expect(throws: StrataClientError.self) { _ = try await untrusted.connect() }
        _ = try await client.ping()
        for c in [client, noCertificate, untrusted] { await c.close() }
        try await server.stop()
    }

    @Test("Auth-file tokens and JWTs name the author of a save; a client's own author name is kept beside it, never instead")
    func authors() async throws {
        let secret = "a-test-secret-of-at-least-32-bytes-0123456789"
        let file = AuthFile(tokens: [.init(digest: TokenDigest.bytes(of: "bob-token"), identity: Identity(subject: "bob", roles: ["editor"]))])
        let jwt = try await JWTVerifier(hmacSecret: secret, file: "key")
        let server = try await TestServer.start {
            $0.authenticator = Authenticator(.init(adminToken: "root", authFile: file, jwt: jwt))
        }
        let bob = server.client("bob-app") { $0.authToken = "bob-token" }
        var save = Wire.save(inserts: [Wire.insertBook("b", title: "Bob's")])
        save.author = "importer"
        _ = try await bob.save(save)
        let signer = JWTKeyCollection()
        await signer.add(hmac: HMACKey(from: Array(secret.utf8)), digestAlgorithm: .sha256)
        struct Claims: JWTPayload {
            var sub: String
            var exp: Double
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let carolToken = try await signer.sign(Claims(sub: "carol", exp: Date().timeIntervalSince1970 + 600))
        let carol = server.client("carol-app") { $0.authToken = carolToken }
        var spoof = Wire.save(inserts: [Wire.insertBook("c", title: "Carol's")])
        spoof.author = "bob"
        _ = try await carol.save(spoof)
        let authors = try await bob.history(store: "Book").transactions.map { (transaction: Strata_V1_HistoryTransaction) in transaction.author }
        #expect(authors.suffix(2) == ["bob (importer)", "carol (bob)"])

        let expired = try await signer.sign(Claims(sub: "carol", exp: Date().timeIntervalSince1970 - 3600))
        let late = server.client("late") { $0.authToken = expired }
        let error = await #expect(throws: StrataClientError.self) { _ = try await late.connect() }
        #expect(error?.code == .unauthenticated)
        #expect(error?.message == "the auth token is not valid")
        for c in [bob, carol, late] { await c.close() }
        try await server.stop()
    }

    @Test("No token, from any source, reaches the log at any level, nor stats")
    func tokensStayOutOfLogs() async throws {
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Logger(label: "strata.capture") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .trace
        let secret = "a-test-secret-of-at-least-32-bytes-0123456789"
        let jwt = try await JWTVerifier(hmacSecret: secret, file: "key", requiresExpiry: false)
        let server = try await TestServer.start(logger: logger) {
            $0.authenticator = Authenticator(.init(adminToken: "root-token-123456", authFile: AuthFile(tokens: [
                .init(digest: TokenDigest.bytes(of: "file-token-abcdef"), identity: Identity(subject: "dave")),
            ]), jwt: jwt))
        }
        let signer = JWTKeyCollection()
        await signer.add(hmac: HMACKey(from: Array(secret.utf8)), digestAlgorithm: .sha256)
        struct Claims: JWTPayload {
            var sub: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let jwtToken = try await signer.sign(Claims(sub: "erin"))
        var tokens = ["root-token-123456", "file-token-abcdef", jwtToken, "wrong-guess-987654"]
        for token in tokens {
            let client = server.client("c") { $0.authToken = token }
            if let hello = try? await client.connect() {
                #expect(!hello.serverName.isEmpty)
                let stats = try await client.stats()
                let text = try stats.jsonString()
                for token in tokens { #expect(!text.contains(token)) }
                _ = try await client.save(Wire.save(inserts: [Wire.insertBook("x", title: "t")]))
            }
            await client.close()
        }
        tokens.append(String(jwtToken.split(separator: ".")[2]))
        try await server.stop()
        let logged = lines.withLockedValue { $0 }
        #expect(logged.contains { $0.contains("authentication failed") })
        #expect(logged.contains { $0.contains("hello") && $0.contains("dave") })
        for token in tokens {
            #expect(!logged.contains { $0.contains(token) }, "a token reached the log")
        }
    }

    @Test("A server refuses a non-loopback address without TLS and authentication, unless told to serve insecurely")
    func networkSafety() throws {
        let anywhere = try SocketAddress(ipAddress: "0.0.0.0", port: 0)
        let lan = try SocketAddress(ipAddress: "192.168.1.10", port: 0)
        for address in [try SocketAddress(ipAddress: "127.0.0.1", port: 0), try SocketAddress(ipAddress: "127.4.5.6", port: 0),
                        try SocketAddress(ipAddress: "::1", port: 0), try SocketAddress(ipAddress: "::ffff:127.0.0.1", port: 0)] {
            #expect(StrataServer.networkRefusal(ServerConfiguration(host: "x"), address: address) == nil)
        }
        let plain = ServerConfiguration(host: "0.0.0.0")
        let refusal = try #require(StrataServer.networkRefusal(plain, address: anywhere))
        #expect(refusal.contains("TLS") && refusal.contains("authentication") && refusal.contains("--insecure"))
        #expect(StrataServer.networkRefusal(ServerConfiguration(host: "::"), address: try SocketAddress(ipAddress: "::", port: 0)) != nil)
        #expect(StrataServer.networkRefusal(plain, address: nil) != nil)
        // A token alone is not enough: it would cross the network in clear.
        let tokenOnly = ServerConfiguration(host: "192.168.1.10", authToken: "t")
        let missing = try #require(StrataServer.networkRefusal(tokenOnly, address: lan))
        #expect(missing.contains("TLS") && !missing.contains("authentication"))
        var insecure = plain
        insecure.allowsInsecureNetwork = true
        #expect(StrataServer.networkRefusal(insecure, address: anywhere) == nil)
    }

    @Test("listen() refuses before binding")
    func listenRefuses() async throws {
        let container = try await PersistentContainer(model: BooksSample.model, storeDescriptions: [StoreDescription(url: nil, type: .inMemory, configuration: "Book"), StoreDescription(url: nil, type: .inMemory, configuration: "Feedback")], factory: .standard, transformers: BooksSample.transformers, transientRules: BooksSample.transientRules)
        let refused = StrataServer(coordinator: container.coordinator, configuration: ServerConfiguration(host: "0.0.0.0", port: 0))
        await #expect(throws: StrataServerError.self) { _ = try await refused.listen() }
        try await container.close()
    }

    @Test("A server told to serve a network insecurely says so in every Stats answer")
    func insecureWarning() async throws {
        let container = try await PersistentContainer(model: BooksSample.model, storeDescriptions: [StoreDescription(url: nil, type: .inMemory, configuration: "Book"), StoreDescription(url: nil, type: .inMemory, configuration: "Feedback")], factory: .standard, transformers: BooksSample.transformers, transientRules: BooksSample.transientRules)
        let logger = Logger(label: "test")
        let exposed = ServerCore(coordinator: container.coordinator, configuration: ServerConfiguration(host: "0.0.0.0", allowsInsecureNetwork: true), logger: logger)
        #expect(exposed.statsResponse().warnings.first?.contains("without TLS and authentication (--insecure)") == true)
        let loopback = ServerCore(coordinator: container.coordinator, configuration: ServerConfiguration(host: "127.0.0.1", allowsInsecureNetwork: true), logger: logger)
        #expect(loopback.statsResponse().warnings.isEmpty)
        let protected = ServerCore(coordinator: container.coordinator, configuration: ServerConfiguration(host: "0.0.0.0", authToken: "t", allowsInsecureNetwork: true), logger: logger)
        #expect(protected.statsResponse().warnings.count == 1, "a token without TLS still crosses the network in clear")
        try await container.close()
    }

    @Test("Ready while serving with its stores answering; not after shutdown")
    func readiness() async throws {
        let server = try await TestServer.start()
        // Served once a client is answered.
        let client = server.client()
        _ = try await client.ping()
        await client.close()
        #expect(await server.server.readiness() == nil)
        try await server.stop()
        #expect(await server.server.readiness() == "the server is not serving")
    }

    @Test("A TLS handshake that does not complete within the frame timeout closes the connection")
    func stalledHandshake() async throws {
        let certificates = try TestCertificates()
        defer { certificates.remove() }
        let server = try await Self.tlsServer(certificates) { $0.frameTimeout = .milliseconds(300) }
        let socket = try await RawConnection.connect(port: server.port)
        // Nothing sent: the server closes within the timeout (bounded wait).
        let started = ContinuousClock.now
        let closed = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await socket.channel.closeFuture.get(); return true }
            group.addTask { try await Task.sleep(for: .seconds(20)); return false }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(closed)
        // Generous: the whole suite runs beside it on two cores.
        #expect(ContinuousClock.now - started < .seconds(15))
        try await server.stop()
    }
}

/// Keeps every log line (message and metadata) for inspection.
struct CapturingLogHandler: LogHandler {
    let lines: NIOLockedValueBox<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.withLockedValue { $0.append("\(event.level) \(event.message) \(all)") }
    }
}
