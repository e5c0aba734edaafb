import Foundation
@testable import StrataAuth
import Testing

@Suite("Auth files, token digests and constant-time comparison")
struct AuthFileTests {
    @Test("Secrets compare equal only when every byte and the length agree")
    func constantTime() {
        #expect(ConstantTime.equal("abc", "abc"))
        #expect(!ConstantTime.equal("abc", "abd"))
        #expect(!ConstantTime.equal("abc", "abcd"))
        #expect(!ConstantTime.equal("", "a"))
        #expect(ConstantTime.equal([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2, 4]))
    }

    @Test("A token's digest is SHA-256 of its UTF-8 bytes in lowercase hex")
    func digest() {
        // sha256("test"), as `printf test | sha256sum` prints it.
        #expect(TokenDigest.hex(of: "test") == "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
        #expect(TokenDigest.parse(TokenDigest.hex(of: "x")) == TokenDigest.bytes(of: "x"))
        #expect(TokenDigest.parse("9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08") == TokenDigest.bytes(of: "test"))
        #expect(TokenDigest.parse("9f86") == nil)
        #expect(TokenDigest.parse(String(repeating: "g", count: 64)) == nil)
    }

    @Test("An auth file maps digests to subjects, roles and claims, and certificate subjects to roles")
    func parses() throws {
        let json = """
        {"tokens": [
           {"sha256": "\(TokenDigest.hex(of: "alice-token"))", "subject": "alice", "roles": ["editor"], "claims": {"tenant": "acme"}},
           {"sha256": "\(TokenDigest.hex(of: "bob-token"))", "subject": "bob"}
         ],
         "certificates": [{"subject": "ingest", "roles": ["writer"]}]}
        """
        let file = try AuthFile(json: Data(json.utf8), file: "auth.json")
        #expect(file.tokens.count == 2)
        let alice = try #require(file.identity(forDigest: TokenDigest.bytes(of: "alice-token")))
        #expect(alice == Identity(subject: "alice", roles: ["editor"], claims: ["tenant": "acme"]))
        #expect(file.identity(forDigest: TokenDigest.bytes(of: "bob-token"))?.roles == [])
        #expect(file.identity(forDigest: TokenDigest.bytes(of: "carol-token")) == nil)
        #expect(file.certificates["ingest"]?.roles == ["writer"])
    }

    @Test("Every problem of an auth file is reported at once, naming its entry, never a token")
    func problems() {
        let json = """
        {"tokens": [
           {"sha256": "abc", "subject": "alice"},
           {"sha256": "\(TokenDigest.hex(of: "t"))", "subject": ""},
           {"sha256": "\(TokenDigest.hex(of: "u"))", "subject": "u"},
           {"sha256": "\(TokenDigest.hex(of: "u"))", "subject": "u2"}
         ],
         "certificates": [{"subject": "c"}, {"subject": "c"}]}
        """
        #expect {
            try AuthFile(json: Data(json.utf8), file: "auth.json")
        } throws: { error in
            let message = (error as? ConfigurationFileError)?.description ?? ""
            return message.hasPrefix("auth.json: ")
                && message.contains("tokens[0].sha256 is not 64 hex digits")
                && message.contains("tokens[1].subject is empty")
                && message.contains("tokens[3]: the same token digest appears twice")
                && message.contains("certificates[1]: subject 'c' appears twice")
        }
        #expect {
            try AuthFile(json: Data("{\"tokens\": [{\"subject\": \"x\"}]}".utf8), file: "a.json")
        } throws: { error in
            (error as? ConfigurationFileError)?.description == "a.json: tokens[0]: 'sha256' is missing"
        }
        #expect {
            try AuthFile(json: Data("not json".utf8), file: "a.json")
        } throws: { error in
            (error as? ConfigurationFileError)?.description.hasPrefix("a.json: not valid JSON") == true
        }
    }

    @Test("The authenticator takes the admin token, an auth-file token, or nothing")
    func authenticator() async {
        let file = AuthFile(tokens: [.init(digest: TokenDigest.bytes(of: "alice-token"), identity: Identity(subject: "alice", roles: ["editor"]))],
                            certificates: ["svc": Identity(subject: "svc", roles: ["writer"])])
        let authenticator = Authenticator(.init(adminToken: "root-token", authFile: file))
        #expect(await authenticator.identity(forToken: "root-token") == Identity(subject: "admin", roles: ["admin"]))
        #expect(await authenticator.identity(forToken: "alice-token")?.subject == "alice")
        #expect(await authenticator.identity(forToken: "nobody") == nil)
        #expect(await authenticator.identity(forToken: "") == nil)
        #expect(authenticator.identity(forCertificateSubject: "svc").roles == ["writer"])
        #expect(authenticator.identity(forCertificateSubject: "other") == Identity(subject: "other"))
        // A reload replaces what later hellos are checked against.
        authenticator.replace(.init(adminToken: "new-root"))
        #expect(await authenticator.identity(forToken: "root-token") == nil)
        #expect(await authenticator.identity(forToken: "alice-token") == nil)
        #expect(await authenticator.identity(forToken: "new-root")?.isAdmin == true)
    }
}
