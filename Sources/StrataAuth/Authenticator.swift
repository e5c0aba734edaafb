import NIOConcurrencyHelpers

/// Decides who a hello speaks for, from its token or the connection's
/// client certificate. What it knows (the single admin token, an auth
/// file, JWT keys) can be replaced while the server runs (SIGHUP), and a
/// hello uses one consistent version of it.
public final class Authenticator: Sendable {
    /// Everything the authenticator checks against.
    public struct Sources: Sendable {
        /// The one token of `--auth-token`: its holder is `admin`.
        public var adminToken: String?
        /// Token digests and certificate subjects (`--auth-file`).
        public var authFile: AuthFile?
        /// JWT keys (`--jwt-key`).
        public var jwt: JWTVerifier?

        /// Creates sources; all nil means no authentication.
        public init(adminToken: String? = nil, authFile: AuthFile? = nil, jwt: JWTVerifier? = nil) {
            self.adminToken = adminToken
            self.authFile = authFile
            self.jwt = jwt
        }

        /// Whether any way of authenticating a token is configured.
        public var acceptsTokens: Bool { adminToken != nil || authFile?.tokens.isEmpty == false || jwt != nil }
    }

    /// The subject of the `--auth-token` holder.
    public static let adminSubject = "admin"

    private let current: NIOLockedValueBox<Sources>

    /// Creates an authenticator over `sources`.
    public init(_ sources: Sources) {
        current = NIOLockedValueBox(sources)
    }

    /// What the authenticator checks against now.
    public var sources: Sources { current.withLockedValue { $0 } }

    /// Replaces what the authenticator checks against (a reload); hellos
    /// already answered keep the identity they were given.
    public func replace(_ sources: Sources) {
        current.withLockedValue { $0 = sources }
    }

    /// The identity `token` proves, or nil. The admin token and every
    /// auth-file digest are compared in constant time; a token with a
    /// JWT's shape is checked against the JWT keys.
    public func identity(forToken token: String) async -> Identity? {
        guard !token.isEmpty else { return nil }
        let sources = self.sources
        var found: Identity?
        if let admin = sources.adminToken, ConstantTime.equal(token, admin) {
            found = Identity(subject: Self.adminSubject, roles: [Identity.adminRole])
        }
        if let file = sources.authFile, !file.tokens.isEmpty, let entry = file.identity(forDigest: TokenDigest.bytes(of: token)) {
            found = found ?? entry
        }
        if found == nil, let jwt = sources.jwt, JWTVerifier.looksLikeJWT(token) {
            found = await jwt.identity(for: token)
        }
        return found
    }

    /// The identity of a client certificate's subject: the roles and
    /// claims the auth file gives that subject, or none.
    public func identity(forCertificateSubject subject: String) -> Identity {
        sources.authFile?.certificates[subject] ?? Identity(subject: subject)
    }
}
