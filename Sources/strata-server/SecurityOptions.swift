import ArgumentParser
import Foundation
import StrataAuth
import StrataModel
import StrataServer

/// The options that decide who may connect and how: TLS, tokens, auth
/// files, JWT keys, and whether to serve a network without them.
struct SecurityOptions: ParsableArguments {
    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("The server's certificate chain (PEM): serve TLS 1.2+ only.", valueName: "file"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The private key of --tls-cert (PEM).", valueName: "file"))
    var tlsKey: String?

    @Option(name: .customLong("tls-client-ca"), help: ArgumentHelp("Require client certificates signed by this CA (PEM); a certificate's common name is the identity of a hello without a token.", valueName: "file"))
    var tlsClientCA: String?

    @Option(name: .customLong("auth-token"), help: ArgumentHelp("One token every hello may carry, whose holder is 'admin' (also $STRATA_AUTH_TOKEN; --auth-token-file keeps it out of ps).", valueName: "token"))
    var authToken: String?

    @Option(name: .customLong("auth-token-file"), help: ArgumentHelp("A file whose first line is the admin token.", valueName: "file"))
    var authTokenFile: String?

    @Option(name: .customLong("auth-file"), help: ArgumentHelp("A JSON file of token digests with their subjects and roles, and of client-certificate subjects' roles (see docs/securing.md; 'strata auth hash-token' prints an entry).", valueName: "file"))
    var authFile: String?

    @Option(name: .customLong("jwt-key"), help: ArgumentHelp("Accept JWTs signed with this key: a PEM public key (RSA: RS256, EC: ES256/384/512, Ed25519: EdDSA) or a JWKS file (tokens name their key by kid).", valueName: "file"))
    var jwtKey: String?

    @Option(name: .customLong("jwt-hmac-secret-file"), help: ArgumentHelp("Accept JWTs signed with the HMAC secret (HS256, 32+ bytes) in this file.", valueName: "file"))
    var jwtHMACSecretFile: String?

    @Flag(name: .customLong("jwt-accept-no-exp"), help: "Accept JWTs without an 'exp' claim (by default refused: such a token never expires).")
    var jwtAcceptNoExpiry = false

    @Option(name: .customLong("jwt-roles-claim"), help: ArgumentHelp("The JWT claim holding the roles.", valueName: "name"))
    var jwtRolesClaim: String = "roles"

    @Option(name: .customLong("jwt-audience"), help: ArgumentHelp("When given, a JWT's 'aud' must include it.", valueName: "audience"))
    var jwtAudience: String?

    @Option(name: .customLong("jwt-issuer"), help: ArgumentHelp("When given, a JWT's 'iss' must be it.", valueName: "issuer"))
    var jwtIssuer: String?

    @Option(help: ArgumentHelp("Access rules per entity (JSON; see docs/securing.md): who may read, create, update and delete which objects. Without it, every authenticated client may do everything.", valueName: "file"))
    var rules: String?

    @Flag(help: "Listen on an address other than loopback without TLS or authentication (anyone who reaches the port may read and change everything).")
    var insecure = false

    func validate() throws {
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        guard tlsClientCA == nil || tlsCertificate != nil else {
            throw ValidationError("--tls-client-ca needs --tls-cert and --tls-key")
        }
        guard authToken == nil || authTokenFile == nil else {
            throw ValidationError("give the admin token once: --auth-token or --auth-token-file")
        }
        guard !jwtRolesClaim.isEmpty else { throw ValidationError("--jwt-roles-claim must not be empty") }
        guard jwtKey == nil || jwtHMACSecretFile == nil else { throw ValidationError("give one JWT key: --jwt-key or --jwt-hmac-secret-file") }
    }

    /// The TLS files, read and checked; nil without --tls-cert.
    func loadTLS() throws -> ServerTLS? {
        guard let tlsCertificate, let tlsKey else { return nil }
        return try ServerTLS(files: ServerTLS.Files(certificateChain: tlsCertificate, privateKey: tlsKey, clientCA: tlsClientCA))
    }

    /// The access rules, read and checked against `model`; nil without --rules.
    func loadRules(model: ObjectModel) throws -> AccessRules? {
        guard let rules else { return nil }
        return try AccessRules(contentsOf: rules, model: model)
    }

    /// Everything tokens are checked against, read from the files; nil
    /// when no way of authenticating is configured.
    func loadAuthentication() async throws -> Authenticator.Sources? {
        var sources = Authenticator.Sources()
        if let authTokenFile {
            let text: String
            do {
                text = try String(contentsOfFile: authTokenFile, encoding: .utf8)
            } catch {
                throw ConfigurationFileError(file: authTokenFile, "cannot be read: \(error.localizedDescription)")
            }
            let token = text.split(whereSeparator: \.isNewline).first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
            guard !token.isEmpty else { throw ConfigurationFileError(file: authTokenFile, "holds no token on its first line") }
            sources.adminToken = token
        } else if let token = authToken ?? ProcessInfo.processInfo.environment["STRATA_AUTH_TOKEN"], !token.isEmpty {
            sources.adminToken = token
        }
        if let authFile {
            sources.authFile = try AuthFile(contentsOf: authFile)
        }
        if let jwtKey {
            sources.jwt = try await JWTVerifier(keyFile: jwtKey, rolesClaim: jwtRolesClaim, audience: jwtAudience, issuer: jwtIssuer, requiresExpiry: !jwtAcceptNoExpiry)
        } else if let jwtHMACSecretFile {
            sources.jwt = try await JWTVerifier(hmacSecretFile: jwtHMACSecretFile, rolesClaim: jwtRolesClaim, audience: jwtAudience, issuer: jwtIssuer, requiresExpiry: !jwtAcceptNoExpiry)
        }
        let any = sources.adminToken != nil || sources.authFile != nil || sources.jwt != nil
        return any ? sources : nil
    }

    /// The ways of authenticating configured, for the start-up line.
    func describeAuthentication(_ sources: Authenticator.Sources?, tls: ServerTLS?) -> String {
        var ways: [String] = []
        if sources?.adminToken != nil { ways.append("admin token") }
        if let file = sources?.authFile { ways.append("auth file (\(file.tokens.count) tokens, \(file.certificates.count) certificate subjects)") }
        if let jwt = sources?.jwt { ways.append("JWT (\(jwt.kind.rawValue) keys)") }
        if tls?.requiresClientCertificates == true { ways.append("client certificates") }
        return ways.isEmpty ? "none (every client may do everything)" : ways.joined(separator: ", ")
    }
}
