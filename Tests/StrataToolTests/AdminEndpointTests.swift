import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GRDB
import Testing

/// The operators' HTTP endpoint of the built server, read with a real HTTP
/// client (URLSession).
extension ToolTests {
@Suite("Admin endpoint", .timeLimit(.minutes(1)))
struct AdminEndpointTests {
    /// The port in `admin endpoint http://127.0.0.1:PORT`.
    static func adminPort(in log: String) -> Int? {
        guard let range = log.range(of: "admin endpoint http://127.0.0.1:") else { return nil }
        return Int(log[range.upperBound...].prefix { $0.isNumber })
    }

    static func get(_ port: Int, _ path: String, method: String = "GET") async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// The value of `strata_requests_total{operation="OP"}` in a scrape.
    static func requests(_ operation: String, in text: String) -> Double {
        for line in text.split(separator: "\n") where line.hasPrefix("strata_requests_total{") && line.contains("operation=\"\(operation)\"") {
            if let value = line.split(separator: " ").last.flatMap({ Double($0) }) { return value }
        }
        return 0
    }

    /// The value of the first line of `metric` whose labels contain each of `labels`.
    static func value(_ metric: String, _ labels: [String] = [], in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(metric + "{") || line.hasPrefix(metric + " ") {
            guard labels.allSatisfy({ line.contains($0) }) else { continue }
            if let value = line.split(separator: " ").last.flatMap({ Double($0) }) { return value }
        }
        return nil
    }

    @Test("/health, /ready and /metrics answer; the figures move with requests")
    func scrape() async throws {
        let server = try LiveServer.start(["--admin-port", "0", "--history-consumer", "scraped"])
        defer { server.stop() }
        let port = try #require(Self.adminPort(in: server.log), "\(server.log)")
        #expect(try await Self.get(port, "/health") == (200, "ok\n"))
        #expect(try await Self.get(port, "/ready") == (200, "ready\n"))
        let cli = CLI(server: server)
        _ = try cli.succeed(["ping"])
        let (status, before) = try await Self.get(port, "/metrics")
        #expect(status == 200)
        for _ in 0..<3 { _ = try cli.succeed(["ping"]) }
        _ = try cli.succeed(["count", "Book"])
        let after = try await Self.get(port, "/metrics").1
        #expect(Self.requests("ping", in: after) - Self.requests("ping", in: before) == 3, "\(after)")
        #expect(Self.requests("fetch", in: after) >= 1)
        for name in ["strata_request_duration", "strata_connections_open", "strata_subscriptions", "strata_row_cache_hits", "strata_store_size_bytes", "strata_requests_in_flight", "strata_wal_checkpoints_total"] {
            #expect(after.contains(name), "\(name) missing from /metrics")
        }
        // Saves: group commits of the Book store, its log, and the history
        // its consumer (this server) has yet to merge.
        for index in 0..<3 { _ = try cli.insertBook("Scraped \(index)") }
        let saved = try await Self.get(port, "/metrics").1
        #expect((Self.value("strata_commit_group_size_count", ["store=\"Book\""], in: saved) ?? 0) >= 3, "\(saved)")
        #expect((Self.value("strata_commit_duration_count", ["store=\"Book\""], in: saved) ?? 0) >= 3)
        #expect((Self.value("strata_wal_size_bytes", ["store=\"Book\""], in: saved) ?? 0) > 0)
        #expect(Self.value("strata_history_backlog", ["store=\"Book\"", "consumer=\"scraped\""], in: saved) != nil, "\(saved)")
        #expect(try await Self.get(port, "/nothing").0 == 404)
        #expect(try await Self.get(port, "/metrics", method: "POST").0 == 405)
    }

    @Test("Without --admin-port there is no endpoint")
    func off() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        #expect(Self.adminPort(in: server.log) == nil)
    }
}
}

extension ToolTests {
@Suite("Versions", .timeLimit(.minutes(1)))
struct VersionTests {
    @Test("--version on every tool; the hello and Stats carry the server's version")
    func versions() throws {
        let expected = try #require(try Executables.run("strata-server", ["--version"]).stdout.split(separator: "\n").first.map(String.init))
        #expect(expected.hasSuffix("(protocol 1.4)"))
        #expect(try Executables.run("strata", ["--version"]).stdout.hasPrefix(expected))
        #expect(try Executables.run("strata-bench", ["--version"]).stdout.hasPrefix(expected))
        let software = String(expected.prefix { $0 != " " })
        let server = try LiveServer.start()
        defer { server.stop() }
        #expect(server.log.contains("strata-server \(expected)"))
        let cli = CLI(server: server)
        #expect(try CLI.object(cli.succeed(["ping", "--json"]))["serverVersion"] as? String == software)
        #expect(try CLI.object(cli.succeed(["stats", "--json"]))["serverVersion"] as? String == software)
    }
}
}

extension ToolTests {
@Suite("Data at rest", .timeLimit(.minutes(1)))
struct DataAtRestTests {
    @Test("A clean shutdown leaves every save in the .sqlite file alone; data files are the owner's only")
    func shutdownAndPermissions() throws {
        let server = try LiveServer.start()
        let cli = CLI(server: server)
        for index in 0..<20 { _ = try cli.insertBook("Book \(index)") }
        server.stop(removingFiles: false)
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let data = server.dataDirectory.appendingPathComponent("data")
        let store = data.appendingPathComponent("Books.sqlite")
        let wal = (try? FileManager.default.attributesOfItem(atPath: store.path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
        #expect(wal == 0, "the write-ahead log still holds \(wal) bytes")
        // The file alone, copied elsewhere, holds every book.
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("strata-copy-\(UUID().uuidString).sqlite")
        try FileManager.default.copyItem(at: store, to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        let queue = try DatabaseQueue(path: copy.path)
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM ZBOOK") } == 20)
        for path in [data.path, store.path] {
            let mode = try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber).intValue
            #expect(mode & 0o077 == 0, "\(path) is \(String(mode, radix: 8))")
        }
    }
}
}

extension ToolTests {
@Suite("Structured logs", .timeLimit(.minutes(1)))
struct StructuredLogTests {
    @Test("--log-format json writes one JSON object per line, with level, label, message and metadata")
    func jsonLines() throws {
        let server = try LiveServer.start(["--log-format", "json", "--log-level", "debug", "--auth-token", "secret-token-123"])
        let cli = CLI(server: server)
        _ = try cli.run(["--auth-token", "wrong", "ping"])
        _ = try cli.succeed(["--auth-token", "secret-token-123", "ping"])
        server.stop(removingFiles: false)
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let lines = server.log.split(separator: "\n").filter { !$0.isEmpty }
        #expect(lines.count > 3)
        var messages: [String] = []
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
            #expect(object["time"] is String && object["level"] is String && object["label"] is String)
            messages.append(object["message"] as? String ?? "")
            if object["message"] as? String == "authentication failed" {
                #expect((object["metadata"] as? [String: Any])?["peer"] is String)
            }
        }
        #expect(messages.contains { $0.hasPrefix("strata-server serving model") })
        #expect(messages.contains("authentication failed"))
        #expect(!server.log.contains("secret-token-123"))
    }
}
}

extension ToolTests {
@Suite("The bundled sample", .timeLimit(.minutes(1)))
struct SampleSeedTests {
    @Test("New sample stores get a dozen books and their feedback, once; --empty skips them")
    func seeded() throws {
        let server = try LiveServer.start(sample: true)
        let cli = CLI(server: server)
        #expect(try cli.succeed(["count", "Book"]).trimmingCharacters(in: .whitespacesAndNewlines) == "12")
        let feedback = Int(try cli.succeed(["count", "Feedback"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(feedback > 12)
        #expect(try cli.succeed(["fetch", "Book", "--sort", "title", "--limit", "1"]).contains("A Field Guide to Clouds"))
        #expect(server.log.contains("wrote a dozen books"))
        // A second server on the same stores does not seed again.
        let shared = server.dataDirectory.appendingPathComponent("data")
        server.stop(removingFiles: false)
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let again = try LiveServer.start(dataDirectory: shared, sample: true)
        defer { again.stop() }
        #expect(try CLI(server: again).succeed(["count", "Book"]).trimmingCharacters(in: .whitespacesAndNewlines) == "12")
        #expect(!again.log.contains("wrote a dozen books"))

        let empty = try LiveServer.start(["--empty"])
        defer { empty.stop() }
        #expect(try CLI(server: empty).succeed(["count", "Book"]).trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}
}
