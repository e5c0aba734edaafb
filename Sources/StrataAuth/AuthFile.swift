import Foundation

/// Static identities from a JSON file (`strata-server --auth-file`): which
/// token digest speaks for which subject and roles, and which roles a
/// client certificate's subject holds. The file holds no token, only its
/// SHA-256 (`strata auth hash-token` prints an entry):
///
/// ```json
/// {
///   "tokens": [
///     { "sha256": "9f86d0…", "subject": "alice", "roles": ["editor"], "claims": { "tenant": "acme" } }
///   ],
///   "certificates": [
///     { "subject": "ingest-service", "roles": ["writer"] }
///   ]
/// }
/// ```
public struct AuthFile: Sendable {
    /// One token's entry.
    public struct TokenEntry: Sendable, Equatable {
        /// The token's SHA-256.
        public var digest: [UInt8]
        /// Who the token speaks for.
        public var identity: Identity

        /// Creates an entry.
        public init(digest: [UInt8], identity: Identity) {
            self.digest = digest
            self.identity = identity
        }
    }

    /// The token entries, in file order.
    public private(set) var tokens: [TokenEntry]
    /// Roles and claims by client-certificate subject.
    public private(set) var certificates: [String: Identity]

    /// The largest auth file read (it is configuration, not data).
    public static let maximumBytes = 16 * 1024 * 1024

    /// Creates an auth file's content directly.
    public init(tokens: [TokenEntry] = [], certificates: [String: Identity] = [:]) {
        self.tokens = tokens
        self.certificates = certificates
    }

    /// Reads and checks the file at `path`; every problem found is in the
    /// error, each naming its entry.
    public init(contentsOf path: String) throws(ConfigurationFileError) {
        try self.init(json: ConfigurationFile.read(path, maximumBytes: Self.maximumBytes), file: path)
    }

    /// Parses a file's bytes; `file` names it in errors.
    public init(json data: Data, file: String) throws(ConfigurationFileError) {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch let DecodingError.dataCorrupted(context) {
            throw ConfigurationFileError(file: file, "not valid JSON: \(context.debugDescription)")
        } catch let DecodingError.keyNotFound(key, context) {
            throw ConfigurationFileError(file: file, "\(Self.path(context.codingPath)): '\(key.stringValue)' is missing")
        } catch let DecodingError.typeMismatch(_, context) {
            throw ConfigurationFileError(file: file, "\(Self.path(context.codingPath)): \(context.debugDescription)")
        } catch let DecodingError.valueNotFound(_, context) {
            throw ConfigurationFileError(file: file, "\(Self.path(context.codingPath)): \(context.debugDescription)")
        } catch {
            throw ConfigurationFileError(file: file, "not a valid auth file: \(error)")
        }
        var problems: [String] = []
        var tokens: [TokenEntry] = []
        var digests: Set<[UInt8]> = []
        for (index, entry) in (document.tokens ?? []).enumerated() {
            let place = "tokens[\(index)]"
            guard let digest = TokenDigest.parse(entry.sha256) else {
                problems.append("\(place).sha256 is not 64 hex digits (a SHA-256: strata auth hash-token prints it)")
                continue
            }
            guard !entry.subject.isEmpty else {
                problems.append("\(place).subject is empty")
                continue
            }
            guard digests.insert(digest).inserted else {
                problems.append("\(place): the same token digest appears twice")
                continue
            }
            tokens.append(TokenEntry(digest: digest, identity: Identity(subject: entry.subject, roles: Set(entry.roles ?? []), claims: entry.claims ?? [:])))
        }
        var certificates: [String: Identity] = [:]
        for (index, entry) in (document.certificates ?? []).enumerated() {
            let place = "certificates[\(index)]"
            guard !entry.subject.isEmpty else {
                problems.append("\(place).subject is empty")
                continue
            }
            guard certificates[entry.subject] == nil else {
                problems.append("\(place): subject '\(entry.subject)' appears twice")
                continue
            }
            certificates[entry.subject] = Identity(subject: entry.subject, roles: Set(entry.roles ?? []), claims: entry.claims ?? [:])
        }
        guard problems.isEmpty else {
            throw ConfigurationFileError(file: file, problems.joined(separator: "; "))
        }
        self.tokens = tokens
        self.certificates = certificates
    }

    /// The identity of the entry whose digest is `digest`; every entry is
    /// compared, in constant time, whichever matches.
    func identity(forDigest digest: [UInt8]) -> Identity? {
        var found: Identity?
        for entry in tokens where ConstantTime.equal(entry.digest, digest) {
            found = entry.identity
        }
        return found
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
        }
        return text.isEmpty ? "the document" : text
    }

    private struct Document: Decodable {
        var tokens: [Token]?
        var certificates: [Certificate]?
    }

    private struct Token: Decodable {
        var sha256: String
        var subject: String
        var roles: [String]?
        var claims: [String: String]?
    }

    private struct Certificate: Decodable {
        var subject: String
        var roles: [String]?
        var claims: [String: String]?
    }
}
