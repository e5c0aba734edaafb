import Foundation
import StrataAuth
import StrataTestCertificates
import Testing

/// TLS, auth files and reloads through the built executables: what an
/// operator types.
extension ToolTests {
@Suite("Securing a server from the command line", .timeLimit(.minutes(2)))
struct SecurityToolTests {
    /// Writes an auth file granting each (token, subject, roles).
    static func writeAuthFile(_ entries: [(token: String, subject: String, roles: [String])], to url: URL) throws {
        let tokens = entries.map { entry in
            "{\"sha256\": \"\(TokenDigest.hex(of: entry.token))\", \"subject\": \"\(entry.subject)\", \"roles\": [\(entry.roles.map { "\"\($0)\"" }.joined(separator: ", "))]}"
        }
        try "{\"tokens\": [\(tokens.joined(separator: ", "))]}".write(to: url, atomically: true, encoding: .utf8)
    }

    @Test("strata auth hash-token prints the auth-file entry of a token read from stdin, or of a new one")
    func hashToken() throws {
        let run = try CLI.bare(["auth", "hash-token", "--subject", "alice", "--role", "editor", "--role", "moderator"], stdin: "alice-token\n")
        #expect(run.status == 0, "\(run.stderr)")
        let entry = try CLI.object(run.stdout)
        #expect(entry["sha256"] as? String == TokenDigest.hex(of: "alice-token"))
        #expect(entry["subject"] as? String == "alice")
        #expect(entry["roles"] as? [String] == ["editor", "moderator"])
        #expect(!run.stdout.contains("alice-token"))

        let generated = try CLI.bare(["auth", "hash-token", "--subject", "svc", "--generate"])
        #expect(generated.status == 0)
        let token = try #require(generated.stderr.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        #expect(token.count == 43)
        #expect(try CLI.object(generated.stdout)["sha256"] as? String == TokenDigest.hex(of: token))

        let empty = try CLI.bare(["auth", "hash-token", "--subject", "x"], stdin: "")
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("no token on standard input"))
    }

    @Test("A TLS server with an auth file: the right CA and token connect, a wrong CA exits 2, SIGHUP reloads the auth file")
    func tlsAndReload() throws {
        let certificates = try TestCertificates()
        defer { certificates.remove() }
        let authFile = certificates.directory.appendingPathComponent("auth.json")
        try Self.writeAuthFile([("alice-token", "alice", ["editor"])], to: authFile)
        let server = try LiveServer.start(["--tls-cert", certificates.serverCertificateFile, "--tls-key", certificates.serverKeyFile,
                                           "--auth-file", authFile.path])
        defer { server.stop() }
        #expect(server.log.contains("transport: TLS 1.2+"))
        #expect(server.log.contains("auth file (1 tokens, 0 certificate subjects)"))
        #expect(server.log.contains("TLS certificate valid until"))
        let cli = CLI(server: server)

        let ok = try cli.run(["--tls-ca", certificates.caFile, "--auth-token", "alice-token", "ping"])
        #expect(ok.status == 0, "\(ok.stderr)")
        // The same through the environment.
        let viaEnvironment = try cli.run(["ping"], environment: ["STRATA_TLS_CA": certificates.caFile, "STRATA_AUTH_TOKEN": "alice-token"])
        #expect(viaEnvironment.status == 0, "\(viaEnvironment.stderr)")

        let wrongCA = try cli.run(["--tls-ca", certificates.otherCAFile, "--auth-token", "alice-token", "ping"])
        #expect(wrongCA.status == 2)
        #expect(wrongCA.stderr.contains("TLS handshake with 127.0.0.1:\(server.port) failed"))
        let plain = try cli.run(["--auth-token", "alice-token", "ping"])
        #expect(plain.status == 2)
        let noToken = try cli.run(["--tls-ca", certificates.caFile, "ping"])
        #expect(noToken.status != 0)
        #expect(noToken.stderr.contains("requires an auth token"))

        // strata-bench over TLS: read-only counts, nothing seeded.
        let bench = try Executables.run("strata-bench", ["--workload", "books", "--port", String(server.port), "--tls-ca", certificates.caFile, "--auth-token", "alice-token",
                                                         "-c", "2", "-n", "40", "--mix", "count=1", "--json"])
        #expect(bench.status == 0, "\(bench.stderr)")
        let badBench = try Executables.run("strata-bench", ["--workload", "books", "--port", String(server.port), "--tls-ca", certificates.otherCAFile, "--auth-token", "alice-token",
                                                            "-c", "1", "-n", "1", "--mix", "count=1"])
        #expect(badBench.status == 2)
        #expect(badBench.stderr.contains("TLS handshake"))

        // Bob is not in the file yet; after SIGHUP he is.
        #expect(try cli.run(["--tls-ca", certificates.caFile, "--auth-token", "bob-token", "ping"]).status != 0)
        try Self.writeAuthFile([("alice-token", "alice", ["editor"]), ("bob-token", "bob", [])], to: authFile)
        kill(server.process.processIdentifier, SIGHUP)
        #expect(Self.wait { server.log.contains("reloaded authentication: auth file (2 tokens") })
        #expect(server.log.contains("reloaded TLS files; certificate valid until"))
        #expect(try cli.run(["--tls-ca", certificates.caFile, "--auth-token", "bob-token", "ping"]).status == 0)
        // A broken file is reported and the loaded one kept.
        try "{ not json".write(to: authFile, atomically: true, encoding: .utf8)
        kill(server.process.processIdentifier, SIGHUP)
        #expect(Self.wait { server.log.contains("keeping the authentication loaded before") })
        #expect(try cli.run(["--tls-ca", certificates.caFile, "--auth-token", "bob-token", "ping"]).status == 0)
        for token in ["alice-token", "bob-token"] { #expect(!server.log.contains(token)) }
    }

    @Test("The admin token can come from a file, and never shows in the log")
    func tokenFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let tokenFile = folder.appendingPathComponent("token")
        try "s3cret-admin-token\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        let server = try LiveServer.start(["--auth-token-file", tokenFile.path, "--log-level", "trace"])
        defer { server.stop() }
        let cli = CLI(server: server)
        #expect(try cli.run(["--auth-token", "s3cret-admin-token", "ping"]).status == 0)
        #expect(try cli.run(["--auth-token", "guess", "ping"]).status != 0)
        #expect(!server.log.contains("s3cret-admin-token"))
        #expect(server.log.contains("authentication: admin token"))
    }

    @Test("strata-server refuses a non-loopback address without TLS and authentication, before opening anything")
    func refusesOpenNetwork() throws {
        for arguments in [["--host", "0.0.0.0"], ["--host", "0.0.0.0", "--auth-token", "t"]] {
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("strata-refuse-\(UUID().uuidString)")
            let run = try Executables.run("strata-server", ["--port", "0", "--data-dir", data.path] + arguments, timeout: 20)
            #expect(run.status != 0)
            #expect(!FileManager.default.fileExists(atPath: data.path), "the data directory was created")
            #expect(run.stderr.contains("refusing to listen on 0.0.0.0"), "\(run.stderr)")
            #expect(run.stderr.contains("--insecure"))
        }
        let mismatched = try Executables.run("strata-server", ["--tls-cert", "/nonexistent/cert.pem"], timeout: 20)
        #expect(mismatched.status != 0)
        #expect(mismatched.stderr.contains("--tls-cert and --tls-key go together"))
        let missing = try Executables.run("strata-server", ["--port", "0", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"], timeout: 20)
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("/nonexistent/cert.pem: cannot be read as PEM certificates"))
    }

    @Test("--rules: checked against the model at start (every problem at once), enforced, reloaded on SIGHUP")
    func rules() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let rulesFile = folder.appendingPathComponent("rules.json")
        try #"{"Book": {"read": "pages == 'x'", "create": "TRUEPREDICATE"}, "Nope": {}}"#.write(to: rulesFile, atomically: true, encoding: .utf8)
        let authFile = folder.appendingPathComponent("auth.json")
        try Self.writeAuthFile([("bob-token", "bob", [])], to: authFile)
        let refused = try Executables.run("strata-server", ["--port", "0", "--data-dir", folder.appendingPathComponent("data").path,
                                                            "--auth-file", authFile.path, "--rules", rulesFile.path], timeout: 20)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Book.read: error 140101"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Nope: the model has no such entity"))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("data").path))
        let unauthenticated = try Executables.run("strata-server", ["--port", "0", "--rules", rulesFile.path], timeout: 20)
        #expect(unauthenticated.status != 0)

        try #"{"Book": {"read": "author == $AUTH.subject", "create": "author == $AUTH.subject"}}"#.write(to: rulesFile, atomically: true, encoding: .utf8)
        let server = try LiveServer.start(["--auth-file", authFile.path, "--rules", rulesFile.path])
        defer { server.stop() }
        #expect(server.log.contains("access rules: from \(rulesFile.path)"))
        let cli = CLI(server: server)
        #expect(try cli.run(["--auth-token", "bob-token", "insert", "Book", "uuid=\(UUID().uuidString)", "title=Mine", "author=bob"]).status == 0)
        let forged = try cli.run(["--auth-token", "bob-token", "insert", "Book", "uuid=\(UUID().uuidString)", "title=Theirs", "author=alice"])
        #expect(forged.status != 0)
        #expect(forged.stderr.contains("PERMISSION_DENIED"), "\(forged.stderr)")
        #expect(try cli.run(["--auth-token", "bob-token", "count", "Book"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        // Reloaded: Bob may now read nothing of Book.
        try #"{"Book": {"read": null}}"#.write(to: rulesFile, atomically: true, encoding: .utf8)
        kill(server.process.processIdentifier, SIGHUP)
        #expect(Self.wait { server.log.contains("reloaded access rules") })
        let count = try cli.run(["--auth-token", "bob-token", "count", "Book"])
        #expect(count.status != 0)
        #expect(count.stderr.contains("Book.read is null (admin only)"))
    }

    @Test("Clients refuse to send a token in clear to a host other than loopback, unless told to")
    func noPlaintextTokens() throws {
        // 192.0.2.1 (TEST-NET-1) is never reached: the refusal comes first.
        let refused = try CLI.bare(["--host", "192.0.2.1", "--auth-token", "t", "ping"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("refusing to send the auth token in clear to 192.0.2.1"), "\(refused.stderr)")
        let viaEnvironment = try CLI.bare(["ping"], environment: ["STRATA_HOST": "db.example.com", "STRATA_AUTH_TOKEN": "t"])
        #expect(viaEnvironment.stderr.contains("refusing to send the auth token in clear to db.example.com"))
        let bench = try Executables.run("strata-bench", ["--workload", "books", "--host", "192.0.2.1", "--auth-token", "t", "-n", "1", "--mix", "count=1"])
        #expect(bench.status == 1)
        #expect(bench.stderr.contains("refusing to send the auth token in clear"))
        // Told to, it tries (and, here, cannot connect: exit 2, not the refusal).
        let insecure = try CLI.bare(["--host", "192.0.2.1", "--port", "9", "--auth-token", "t", "--insecure", "ping"], timeout: 20)
        #expect(!insecure.stderr.contains("refusing to send"))
    }

    /// Polls `condition` for up to 10 s.
    static func wait(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }
}
}
