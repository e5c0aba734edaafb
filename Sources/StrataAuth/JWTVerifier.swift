import Foundation
import JWTKit

/// Checks signed JWTs (`strata-server --jwt-key`) with vapor/jwt-kit and
/// turns a valid one into an ``Identity``: `sub` is the subject, the
/// roles claim (`roles` unless configured; an array of strings or one
/// space-separated string) the roles, every other string, number or
/// boolean claim a claim. `exp` and `nbf` are honoured with ``skew``.
public struct JWTVerifier: Sendable {
    /// What a key file held.
    public enum KeyKind: String, Sendable {
        /// A JWKS document (`{"keys": [...]}`): a token must name one of
        /// its keys by `kid`.
        case jwks
        /// An RSA public key in PEM: RS256.
        case rsa
        /// An EC public key in PEM: ES256, ES384 or ES512 by its curve.
        case ecdsa
        /// An Ed25519 public key in PEM: EdDSA.
        case eddsa
        /// An HMAC secret (HS256), at least 32 bytes, from a file given as
        /// one (``init(hmacSecretFile:rolesClaim:audience:issuer:requiresExpiry:)``).
        case hmac
    }

    /// How far a clock may be off: a token is taken this long after its
    /// `exp` and this long before its `nbf`.
    public static let skew: TimeInterval = 60
    /// The shortest HMAC secret accepted (RFC 7518 §3.2: a key as long as the hash).
    public static let minimumSecretBytes = 32

    private let keys: JWTKeyCollection
    /// What the key file held.
    public let kind: KeyKind
    /// The claim that lists the roles.
    public let rolesClaim: String
    /// When set, the token's `aud` must include it.
    public let audience: String?
    /// When set, the token's `iss` must be it.
    public let issuer: String?
    /// Whether a token without `exp` is refused (a token that never
    /// expires cannot be taken back).
    public let requiresExpiry: Bool

    /// Loads the keys of the file at `path`: a JWKS (JSON) or a PEM
    /// public key (RSA, EC or Ed25519). Nothing else is taken for a key:
    /// text read as an HMAC secret by mistake would be a public one.
    public init(keyFile path: String, rolesClaim: String = "roles", audience: String? = nil, issuer: String? = nil, requiresExpiry: Bool = true) async throws(ConfigurationFileError) {
        let text = String(decoding: try ConfigurationFile.read(path, maximumBytes: 1024 * 1024), as: UTF8.self)
        try await self.init(keyText: text, file: path, rolesClaim: rolesClaim, audience: audience, issuer: issuer, requiresExpiry: requiresExpiry)
    }

    /// Loads the HMAC secret (HS256) of the file at `path`: its text,
    /// trimmed, at least ``minimumSecretBytes``.
    public init(hmacSecretFile path: String, rolesClaim: String = "roles", audience: String? = nil, issuer: String? = nil, requiresExpiry: Bool = true) async throws(ConfigurationFileError) {
        let text = String(decoding: try ConfigurationFile.read(path, maximumBytes: 64 * 1024), as: UTF8.self)
        try await self.init(hmacSecret: text, file: path, rolesClaim: rolesClaim, audience: audience, issuer: issuer, requiresExpiry: requiresExpiry)
    }

    /// Takes `text` (trimmed) as an HMAC secret; `file` names it in errors.
    public init(hmacSecret text: String, file: String, rolesClaim: String = "roles", audience: String? = nil, issuer: String? = nil, requiresExpiry: Bool = true) async throws(ConfigurationFileError) {
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard secret.utf8.count >= Self.minimumSecretBytes else {
            throw ConfigurationFileError(file: file, "an HMAC secret must be at least \(Self.minimumSecretBytes) bytes")
        }
        guard !secret.hasPrefix("{"), !secret.contains("-----BEGIN"), !secret.contains("://"), !secret.hasPrefix("ssh-") else {
            throw ConfigurationFileError(file: file, "looks like a key, a key set or an address, not a secret: give public keys and JWKS with --jwt-key")
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Array(secret.utf8)), digestAlgorithm: .sha256)
        self.keys = keys
        self.kind = .hmac
        self.rolesClaim = rolesClaim
        self.audience = audience
        self.issuer = issuer
        self.requiresExpiry = requiresExpiry
    }

    /// Loads keys from a key file's text (a JWKS or a PEM public key);
    /// `file` names it in errors.
    public init(keyText text: String, file: String, rolesClaim: String = "roles", audience: String? = nil, issuer: String? = nil, requiresExpiry: Bool = true) async throws(ConfigurationFileError) {
        let keys = JWTKeyCollection()
        // A byte-order mark is not part of the document.
        let trimmed = (text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text).trimmingCharacters(in: .whitespacesAndNewlines)
        let kind: KeyKind
        do {
            if trimmed.hasPrefix("{") {
                kind = .jwks
                try await keys.add(jwksJSON: trimmed)
                // Without a default, a token must name one of the set's
                // keys: an unknown (or missing) kid is not tried against
                // whichever key came first.
                _ = await keys.clearDefault()
            } else if trimmed.hasPrefix("-----BEGIN") {
                guard trimmed.contains("PUBLIC KEY-----") else {
                    throw ConfigurationFileError(file: file, "holds a PEM block that is not a public key (give the verifying key, never a private one)")
                }
                kind = try await Self.addPublicKey(trimmed, to: keys, file: file)
            } else {
                throw ConfigurationFileError(file: file, "is neither a JWKS (JSON) nor a PEM public key; an HMAC secret goes in --jwt-hmac-secret-file")
            }
        } catch let error as ConfigurationFileError {
            throw error
        } catch {
            throw ConfigurationFileError(file: file, "not a usable JWKS: \(error)")
        }
        self.keys = keys
        self.kind = kind
        self.rolesClaim = rolesClaim
        self.audience = audience
        self.issuer = issuer
        self.requiresExpiry = requiresExpiry
    }

    private static func addPublicKey(_ pem: String, to keys: JWTKeyCollection, file: String) async throws(ConfigurationFileError) -> KeyKind {
        if let key = try? Insecure.RSA.PublicKey(pem: pem) {
            await keys.add(rsa: key, digestAlgorithm: .sha256)
            return .rsa
        }
        if let key = try? ES256PublicKey(pem: pem) {
            await keys.add(ecdsa: key)
            return .ecdsa
        }
        if let key = try? ES384PublicKey(pem: pem) {
            await keys.add(ecdsa: key)
            return .ecdsa
        }
        if let key = try? ES512PublicKey(pem: pem) {
            await keys.add(ecdsa: key)
            return .ecdsa
        }
        if let key = try? EdDSA.PublicKey(pem: pem) {
            await keys.add(eddsa: key)
            return .eddsa
        }
        throw ConfigurationFileError(file: file, "holds a public key that is not RSA, EC (P-256, P-384, P-521) or Ed25519")
    }

    /// Whether `token` has a JWT's shape (three base64url parts), so that
    /// it is checked here rather than as a static token.
    public static func looksLikeJWT(_ token: String) -> Bool {
        token.utf8.count > 16 && token.utf8.filter { $0 == UInt8(ascii: ".") }.count == 2
    }

    /// The identity `token` proves, or nil when its signature, key id,
    /// times, audience or issuer do not hold (which one is not told: the
    /// answer to a guess says nothing of what was wrong).
    public func identity(for token: String, now: Date = Date()) async -> Identity? {
        guard let payload = try? await keys.verify(token, as: Claims.self) else { return nil }
        let claims = payload.values
        if requiresExpiry, claims["exp"] == nil { return nil }
        if let exp = claims["exp"]?.number, now.timeIntervalSince1970 > exp + Self.skew { return nil }
        if let nbf = claims["nbf"]?.number, now.timeIntervalSince1970 < nbf - Self.skew { return nil }
        if claims["exp"] != nil, claims["exp"]?.number == nil { return nil }
        if claims["nbf"] != nil, claims["nbf"]?.number == nil { return nil }
        if let audience {
            let audiences = claims["aud"]?.strings ?? []
            guard audiences.contains(audience) else { return nil }
        }
        if let issuer, claims["iss"]?.text != issuer { return nil }
        guard let subject = claims["sub"]?.text, !subject.isEmpty else { return nil }
        var roles: Set<String> = []
        switch claims[rolesClaim] {
        case nil:
            break
        case .string(let list)?:
            // OAuth's `scope` style: one string, space-separated.
            roles = Set(list.split(separator: " ").map(String.init))
        case let value?:
            // An array names whole roles: "team admin" is not "admin".
            guard let listed = value.strings else { return nil }
            roles = Set(listed)
        }
        var texts: [String: String] = [:]
        for (name, value) in claims where name != rolesClaim {
            if let text = value.text { texts[name] = text }
        }
        return Identity(subject: subject, roles: roles, claims: texts)
    }

    /// Every claim of a token, kept as JSON values: which ones matter is
    /// configured at run time.
    struct Claims: JWTPayload {
        var values: [String: ClaimValue]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            var values: [String: ClaimValue] = [:]
            for key in container.allKeys {
                values[key.stringValue] = try container.decode(ClaimValue.self, forKey: key)
            }
            self.values = values
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            for (name, value) in values { try container.encode(value, forKey: AnyKey(stringValue: name)) }
        }

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A claim's JSON value.
    enum ClaimValue: Codable, Sendable {
        case string(String)
        case number(Double)
        case bool(Bool)
        case array([ClaimValue])
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(String.self) { self = .string(value) }
            else if let value = try? container.decode(Bool.self) { self = .bool(value) }
            else if let value = try? container.decode(Double.self) { self = .number(value) }
            else if let value = try? container.decode([ClaimValue].self) { self = .array(value) }
            else { self = .other }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .number(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .other: try container.encodeNil()
            }
        }

        var number: Double? { if case .number(let value) = self { value } else { nil } }

        /// A string, number or boolean as text.
        var text: String? {
            switch self {
            case .string(let value): value
            case .number(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
            case .bool(let value): value ? "true" : "false"
            case .array, .other: nil
            }
        }

        /// A string, or an array of strings.
        var strings: [String]? {
            switch self {
            case .string(let value): [value]
            case .array(let values):
                values.allSatisfy { if case .string = $0 { true } else { false } } ? values.compactMap { if case .string(let s) = $0 { s } else { nil } } : nil
            default: nil
            }
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
