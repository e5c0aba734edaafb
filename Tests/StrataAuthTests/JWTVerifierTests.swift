import Foundation
import JWTKit
@testable import StrataAuth
import Testing

@Suite("JWTs: signature, key id, times, audience, issuer, roles")
struct JWTVerifierTests {
    /// Claims as a test signs them.
    struct Payload: JWTPayload {
        var sub: String?
        var roles: [String]?
        var exp: Double?
        var nbf: Double?
        var aud: String?
        var iss: String?
        var tenant: String?
        var level: Int?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static let secret = "a-test-secret-of-at-least-32-bytes-0123456789"

    static func hmacSigner(_ secret: String = secret) async -> JWTKeyCollection {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Array(secret.utf8)), digestAlgorithm: .sha256)
        return keys
    }

    @Test("A valid HS256 token gives its subject, roles and other claims")
    func valid() async throws {
        let verifier = try await JWTVerifier(hmacSecret: Self.secret, file: "key", requiresExpiry: false)
        #expect(verifier.kind == .hmac)
        let now = Date().timeIntervalSince1970
        let token = try await Self.hmacSigner().sign(Payload(sub: "alice", roles: ["editor", "moderator"], exp: now + 300, tenant: "acme", level: 3))
        #expect(JWTVerifier.looksLikeJWT(token))
        let identity = try #require(await verifier.identity(for: token))
        #expect(identity.subject == "alice")
        #expect(identity.roles == ["editor", "moderator"])
        #expect(identity.claims["tenant"] == "acme")
        #expect(identity.claims["level"] == "3")
        #expect(identity.claims["sub"] == "alice")
    }

    @Test("Expired, not yet valid, wrongly signed, unsigned or subject-less tokens prove nothing")
    func refused() async throws {
        let verifier = try await JWTVerifier(hmacSecret: Self.secret, file: "key", requiresExpiry: false)
        let signer = await Self.hmacSigner()
        let now = Date().timeIntervalSince1970
        // Within the clock skew: still taken.
        #expect(await verifier.identity(for: try await signer.sign(Payload(sub: "a", exp: now - 30))) != nil)
        #expect(await verifier.identity(for: try await signer.sign(Payload(sub: "a", exp: now - 120))) == nil)
        #expect(await verifier.identity(for: try await signer.sign(Payload(sub: "a", nbf: now + 30))) != nil)
        #expect(await verifier.identity(for: try await signer.sign(Payload(sub: "a", nbf: now + 120))) == nil)
        #expect(await verifier.identity(for: try await signer.sign(Payload(roles: ["admin"]))) == nil)
        let forged = try await Self.hmacSigner("another-secret-of-at-least-32-bytes-xxxxxxxx").sign(Payload(sub: "a", roles: ["admin"]))
        #expect(await verifier.identity(for: forged) == nil)
        // alg "none": header {"alg":"none","typ":"JWT"}, payload {"sub":"a","roles":["admin"]}.
        let unsigned = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhIiwicm9sZXMiOlsiYWRtaW4iXX0."
        #expect(await verifier.identity(for: unsigned) == nil)
        #expect(await verifier.identity(for: "not.a.jwt") == nil)
        // A tampered payload keeps the old signature.
        let valid = try await signer.sign(Payload(sub: "a", roles: ["reader"]))
        let parts = valid.split(separator: ".")
        let admin = Data(#"{"sub":"a","roles":["admin"]}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        #expect(await verifier.identity(for: "\(parts[0]).\(admin).\(parts[2])") == nil)
    }

    @Test("A token without exp is refused unless accepted explicitly; roles in an array are whole names")
    func expiryAndRoles() async throws {
        let strict = try await JWTVerifier(hmacSecret: Self.secret, file: "key")
        let lenient = try await JWTVerifier(hmacSecret: Self.secret, file: "key", requiresExpiry: false)
        let signer = await Self.hmacSigner()
        let forever = try await signer.sign(Payload(sub: "a"))
        #expect(await strict.identity(for: forever) == nil)
        #expect(await lenient.identity(for: forever)?.subject == "a")
        let team = try await signer.sign(Payload(sub: "a", roles: ["team admin", "reader"], exp: Date().timeIntervalSince1970 + 60))
        #expect(await strict.identity(for: team)?.roles == ["team admin", "reader"])
    }

    @Test("Audience, issuer and the roles claim are configurable")
    func configured() async throws {
        let verifier = try await JWTVerifier(hmacSecret: Self.secret, file: "key", rolesClaim: "scope", audience: "strata", issuer: "https://id.example", requiresExpiry: false)
        let signer = await Self.hmacSigner()
        struct Scoped: JWTPayload {
            var sub: String
            var scope: String
            var aud: [String]
            var iss: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let good = try await signer.sign(Scoped(sub: "svc", scope: "read write", aud: ["other", "strata"], iss: "https://id.example"))
        #expect(await verifier.identity(for: good)?.roles == ["read", "write"])
        let wrongAudience = try await signer.sign(Scoped(sub: "svc", scope: "read", aud: ["other"], iss: "https://id.example"))
        #expect(await verifier.identity(for: wrongAudience) == nil)
        let wrongIssuer = try await signer.sign(Scoped(sub: "svc", scope: "read", aud: ["strata"], iss: "https://evil.example"))
        #expect(await verifier.identity(for: wrongIssuer) == nil)
    }

    @Test("PEM public keys: EC (ES256) and Ed25519; a private key or a short secret is refused")
    func publicKeys() async throws {
        let ec = ES256PrivateKey()
        let ecVerifier = try await JWTVerifier(keyText: ec.publicKey.pemRepresentation, file: "ec.pem", requiresExpiry: false)
        #expect(ecVerifier.kind == .ecdsa)
        let ecSigner = JWTKeyCollection()
        await ecSigner.add(ecdsa: ec)
        #expect(await ecVerifier.identity(for: try await ecSigner.sign(Payload(sub: "ec-user")))?.subject == "ec-user")
        // Signed by another EC key: refused.
        let other = JWTKeyCollection()
        await other.add(ecdsa: ES256PrivateKey())
        #expect(await ecVerifier.identity(for: try await other.sign(Payload(sub: "ec-user"))) == nil)

        let ed = try EdDSA.PrivateKey(curve: .ed25519)
        let edVerifier = try await JWTVerifier(keyText: ed.publicKey.pemRepresentation, file: "ed.pem", requiresExpiry: false)
        #expect(edVerifier.kind == .eddsa)
        let edSigner = JWTKeyCollection()
        await edSigner.add(eddsa: ed)
        #expect(await edVerifier.identity(for: try await edSigner.sign(Payload(sub: "ed-user")))?.subject == "ed-user")

        await #expect(throws: ConfigurationFileError.self) { _ = try await JWTVerifier(keyText: ec.pemRepresentation, file: "private.pem") }
        await #expect(throws: ConfigurationFileError.self) { _ = try await JWTVerifier(hmacSecret: "short", file: "secret") }
        // Text that is not a key is never taken for an HMAC secret, and a
        // secret that looks like a key or an address is refused.
        await #expect(throws: ConfigurationFileError.self) { _ = try await JWTVerifier(keyText: Self.secret, file: "key") }
        await #expect(throws: ConfigurationFileError.self) { _ = try await JWTVerifier(keyText: "https://id.example/.well-known/jwks.json", file: "key") }
        await #expect(throws: ConfigurationFileError.self) { _ = try await JWTVerifier(hmacSecret: ec.publicKey.pemRepresentation, file: "secret") }
        await #expect(throws: ConfigurationFileError.self) { _ = try await JWTVerifier(hmacSecret: "https://id.example/keys-are-not-secrets-0123456789", file: "secret") }
        // A byte-order mark before a JWKS or PEM is not part of it.
        #expect(try await JWTVerifier(keyText: "\u{FEFF}" + ec.publicKey.pemRepresentation, file: "bom.pem").kind == .ecdsa)
    }

    @Test("A JWKS: the token's kid picks the key; an unknown kid proves nothing")
    func jwks() async throws {
        let key = ES256PrivateKey()
        let parameters = try #require(key.publicKey.parameters)
        let jwks = """
        {"keys": [{"kty": "EC", "crv": "P-256", "alg": "ES256", "kid": "k1", "use": "sig", "x": "\(parameters.x)", "y": "\(parameters.y)"}]}
        """
        let verifier = try await JWTVerifier(keyText: jwks, file: "jwks.json", requiresExpiry: false)
        #expect(verifier.kind == .jwks)
        let signer = JWTKeyCollection()
        await signer.add(ecdsa: key, kid: "k1")
        #expect(await verifier.identity(for: try await signer.sign(Payload(sub: "u"), kid: "k1"))?.subject == "u")
        let stranger = JWTKeyCollection()
        await stranger.add(ecdsa: key, kid: "k2")
        #expect(await verifier.identity(for: try await stranger.sign(Payload(sub: "u"), kid: "k2")) == nil)
        let anonymous = JWTKeyCollection()
        await anonymous.add(ecdsa: key)
        #expect(await verifier.identity(for: try await anonymous.sign(Payload(sub: "u"))) == nil)
    }
}
