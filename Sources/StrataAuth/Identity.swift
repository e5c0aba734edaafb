/// Who a connection speaks for: established once, by its hello's token or
/// its TLS client certificate, and kept for the connection's life.
///
/// Access rules read it as `$AUTH.subject`, `$AUTH.roles` and
/// `$AUTH.claims.NAME`; saves record ``subject`` as their author.
public struct Identity: Sendable, Hashable {
    /// The name of the user or service (a token's subject, a JWT's `sub`,
    /// a client certificate's common name).
    public var subject: String
    /// The roles granted; ``adminRole`` bypasses every rule.
    public var roles: Set<String>
    /// Other claims (a JWT's string, number and boolean claims; an auth
    /// file entry's `claims`), as text.
    public var claims: [String: String]

    /// The role that may do everything, rules or not.
    public static let adminRole = "admin"

    /// Creates an identity.
    public init(subject: String, roles: Set<String> = [], claims: [String: String] = [:]) {
        self.subject = subject
        self.roles = roles
        self.claims = claims
    }

    /// Whether the identity holds ``adminRole``.
    public var isAdmin: Bool { roles.contains(Self.adminRole) }

    /// Who a server without any authentication serves: anyone reaching the
    /// port may do everything.
    public static let anonymous = Identity(subject: "anonymous", roles: [adminRole])
}
