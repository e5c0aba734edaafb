import Foundation
import Testing

/// Runs the built `strata-bench` against a live `strata-server`.
extension ToolTests {
@Suite("strata-bench executable", .serialized, .timeLimit(.minutes(2)))
struct BenchToolTests {
    private static func object(_ text: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(value as? [String: Any], "not a JSON object: \(text)")
    }

    private static func int(_ value: Any?) -> Int? { (value as? NSNumber)?.intValue }

    @Test("A fixed count of requests: JSON with every field, requests = ok + errors, none lost", arguments: ["wire", "client"])
    func fixedCount(driver: String) throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let run = try Executables.run("strata-bench", [
            "--workload", "books", "--port", "\(server.port)", "-c", "4", "--concurrency", "8", "-n", "400", "--driver", driver,
            "--dataset", "200", "--mix", "get=40,query=20,insert=15,update=15,refresh=5,count=5", "--json",
            // Concurrent updates of one object conflict: counted, allowed here.
            "--max-error-rate", "100%",
        ], timeout: 90)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try Self.object(run.stdout)
        #expect((report["settings"] as? [String: Any])?["driver"] as? String == driver)
        #expect(Self.int(report["requests"]) == 400)
        let errors = try #require(report["errors"] as? [String: Any])
        let errorCount = errors.values.compactMap(Self.int).reduce(0, +)
        #expect(Self.int(report["ok"]).map { $0 + errorCount } == 400)
        // Conflicts are counted, never anything else.
        #expect(Set(errors.keys).isSubset(of: ["ABORTED"]), "\(errors)")
        #expect((report["durationSeconds"] as? NSNumber)?.doubleValue ?? 0 > 0)
        #expect((report["throughputRps"] as? NSNumber)?.doubleValue ?? 0 > 0)
        let latency = try #require(report["latencyMs"] as? [String: Any])
        for key in ["p50", "p90", "p99", "p999", "max"] {
            #expect(latency[key] is NSNumber, "latencyMs.\(key) missing")
        }
        let p50 = (latency["p50"] as? NSNumber)?.doubleValue ?? -1
        let max = (latency["max"] as? NSNumber)?.doubleValue ?? -1
        #expect(p50 > 0 && p50 <= max)
        let operations = try #require(report["operations"] as? [String: Any])
        #expect(Set(operations.keys) == ["get", "query", "insert", "update", "refresh", "count"])
        var total = 0
        var byName: [String: Int] = [:]
        for (name, value) in operations {
            let op = try #require(value as? [String: Any], "\(name)")
            let requests = try #require(Self.int(op["requests"]), "\(name)")
            let opErrors = (op["errors"] as? [String: Any])?.values.compactMap(Self.int).reduce(0, +) ?? 0
            #expect(Self.int(op["ok"]).map { $0 + opErrors } == requests, "\(name)")
            #expect(op["latencyMs"] is [String: Any], "\(name)")
            byName[name] = requests
            total += requests
        }
        #expect(total == 400)
        // The server saw every one (plus the seeding and setup requests).
        let stats = try Executables.run("strata", ["--port", "\(server.port)", "stats", "--json"], timeout: 20)
        #expect(stats.status == 0, "\(stats.stderr)")
        let served = try Self.object(stats.stdout)["operations"] as? [[String: Any]] ?? []
        func seen(_ operation: String) -> Int {
            served.first { $0["operation"] as? String == operation }.flatMap { Self.int($0["requests"]) } ?? 0
        }
        #expect(seen("refresh") >= (byName["get"] ?? 0) + (byName["refresh"] ?? 0))
        #expect(seen("save") >= (byName["insert"] ?? 0) + (byName["update"] ?? 0))
        #expect(seen("fetch") >= (byName["query"] ?? 0) + (byName["count"] ?? 0))
        // Every acknowledged insert is stored, with its values (the wire
        // driver frames inserts by hand; the client driver through the library).
        let inserted = (operations["insert"] as? [String: Any]).flatMap { Self.int($0["ok"]) } ?? -1
        #expect(inserted > 0)
        let count = try Executables.run("strata", ["--port", "\(server.port)", "count", "Book", "--where", "title BEGINSWITH 'Bench book ' AND pages BETWEEN {1, 1000} AND uuid != nil", "--json"], timeout: 20)
        #expect(count.status == 0, "\(count.stderr)")
        #expect(Int(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == inserted, "\(count.stdout)")
    }

    @Test("Inserted books' UUIDs are unique across connections and across runs (Book.uuid is a uniqueness constraint)", arguments: ["wire", "client"])
    func insertedUUIDsAreUnique(driver: String) throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        // Two runs on one store: a generator seeded the same way each run
        // would give the second run's inserts the first run's UUIDs.
        for run in 1...2 {
            let bench = try Executables.run("strata-bench", [
                "--workload", "books", "--port", "\(server.port)", "-c", "4", "-n", "200", "--driver", driver,
                "--dataset", "10", "--mix", "insert=100", "--json",
            ], timeout: 60)
            #expect(bench.status == 0, "run \(run): \(bench.stderr)")
            let report = try Self.object(bench.stdout)
            #expect(Self.int(report["ok"]) == 200, "run \(run): \(report["errors"] ?? "")")
        }
        let count = try Executables.run("strata", ["--port", "\(server.port)", "count", "Book", "--where", "title BEGINSWITH 'Bench book ' AND uuid != nil", "--json"], timeout: 20)
        #expect(count.status == 0, "\(count.stderr)")
        #expect(Int(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == 400, "\(count.stdout)")
    }

    @Test("Open loop at a fixed rate for a duration, with a report for people", arguments: ["wire", "client"])
    func openLoopReport(driver: String) throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let hgrm = server.dataDirectory.appendingPathComponent("latency.hgrm")
        let run = try Executables.run("strata-bench", [
            "--workload", "books", "--port", "\(server.port)", "-c", "2", "--rps", "200", "-d", "1s", "--dataset", "50", "--mix", "get=80,insert=20", "--driver", driver,
            "--hgrm", hgrm.path,
        ], timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("requests"))
        #expect(run.stdout.contains("p99.9"))
        // HdrHistogram's percentile distribution: its header, its footer,
        // and the total count of the report's first line.
        let distribution = try String(contentsOf: hgrm, encoding: .utf8)
        #expect(distribution.contains("Value     Percentile TotalCount 1/(1-Percentile)"), "\(distribution)")
        #expect(distribution.contains("#[Mean    ="))
        // Not a terminal: no progress line noise.
        #expect(!run.stdout.contains("\u{1B}[2K"))
        // About 200 requests in one second (the rate, not the server's speed).
        let first = try #require(run.stdout.split(separator: "\n").first)
        let words = first.split(separator: " ")
        let requests = try #require(words.firstIndex(of: "requests").flatMap { Int(words[words.index(after: $0)]) })
        #expect((150...210).contains(requests), "\(first)")
        let total = distribution.range(of: "Total count    =").map { distribution[$0.upperBound...].prefix { $0 != "]" }.trimmingCharacters(in: .whitespaces) }
        #expect(total == "\(requests)", "\(distribution)")
    }

    /// Runs strata-bench (4 connections, 16 in flight, 100 books) with
    /// `arguments` against a server that is stopped 2 s in.
    private static func benchWhileTheServerStops(_ arguments: [String]) async throws -> Executables.Run {
        let server = try LiveServer.start()
        let port = server.port
        let bench = Task.detached {
            try Executables.run("strata-bench", ["--workload", "books", "--port", "\(port)", "-c", "4", "--concurrency", "16", "--dataset", "100", "--json"] + arguments, timeout: 60)
        }
        try await Task.sleep(for: .seconds(2))
        server.stop()
        return try await bench.value
    }

    @Test("A server that goes away mid-run: the bench ends, every request counted, the lost ones as UNAVAILABLE")
    func serverGoesAway() async throws {
        let run = try await Self.benchWhileTheServerStops(["-d", "20s", "--mix", "get=90,insert=10"])
        // Requests were lost with the connection: exit 2.
        #expect(run.status == 2, "\(run.stderr)")
        let report = try Self.object(run.stdout)
        let requests = try #require(Self.int(report["requests"]))
        let errors = try #require(report["errors"] as? [String: Any])
        #expect(Self.int(report["ok"]).map { $0 + errors.values.compactMap(Self.int).reduce(0, +) } == requests)
        #expect(Self.int(report["ok"]) ?? 0 > 0)
        // Far less than the 20 s asked for: the run ended with the server.
        #expect((report["durationSeconds"] as? NSNumber)?.doubleValue ?? 99 < 15)
        #expect(Set(errors.keys).isSubset(of: ["UNAVAILABLE"]), "\(errors)")
    }

    @Test("A server that goes away before -n is reached: the report, then exit 2 saying how many requests were made")
    func serverGoesAwayBeforeTheCount() async throws {
        let run = try await Self.benchWhileTheServerStops(["-n", "100000000", "--mix", "get=100"])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("of 100000000 requests were made"), "\(run.stderr)")
        let report = try Self.object(run.stdout)
        let requests = try #require(Self.int(report["requests"]))
        #expect(requests > 0 && requests < 100_000_000)
    }

    @Test("The wire driver with --compression: large answers arrive deflated and are counted like the rest")
    func wireDriverCompression() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let run = try Executables.run("strata-bench", [
            "--workload", "books", "--port", "\(server.port)", "-c", "2", "-n", "200", "--compression", "--query-limit", "50",
            "--dataset", "200", "--mix", "get=50,query=50", "--json",
        ], timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try Self.object(run.stdout)
        #expect(Self.int(report["ok"]) == 200)
        #expect((report["errors"] as? [String: Any])?.isEmpty == true)
        #expect((report["settings"] as? [String: Any])?["compression"] as? Bool == true)
    }

    @Test("A server that refuses the load's connections: exit 2 with the server's reason")
    func connectionsRefused() throws {
        let server = try LiveServer.start(["--max-connections", "2"])
        defer { server.stop() }
        let run = try Executables.run("strata-bench", ["--workload", "books", "--port", "\(server.port)", "-c", "4", "-n", "10", "--dataset", "5", "--mix", "get=100"], timeout: 30)
        #expect(run.status == 2, "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("RESOURCE_EXHAUSTED"), "\(run.stderr)")
    }

    @Test("The connection options of strata: -h/-p, --url, --auth-token-file, --connect-timeout")
    func connectionOptions() throws {
        let server = try LiveServer.start(["--auth-token", "sesame"])
        defer { server.stop() }
        let token = server.dataDirectory.appendingPathComponent("token")
        try Data("sesame\n".utf8).write(to: token)
        for arguments in [
            ["-h", "127.0.0.1", "-p", "\(server.port)"], ["--url", "tcp://127.0.0.1:\(server.port)"], ["-p", "\(server.port)", "--connect-timeout", "2"],
            ["-p\(server.port)"],
        ] {
            let run = try Executables.run("strata-bench", arguments + ["--auth-token-file", token.path, "--entity", "Book", "-n", "5", "--mix", "count=1", "-q"], timeout: 30)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
        }
        // A refused token exits 1, as in strata.
        let refused = try Executables.run("strata-bench", ["-p", "\(server.port)", "--entity", "Book", "-n", "1", "--mix", "count=1"], environment: ["STRATA_AUTH_TOKEN": ""], timeout: 30)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("error: UNAUTHENTICATED"), "\(refused.stderr)")
        let badURL = try Executables.run("strata-bench", ["--url", "strata://x", "-n", "1"], timeout: 20)
        #expect(badURL.status == 1 && badURL.stderr.contains("--url"), "\(badURL.stderr)")
    }

    @Test("Bad options exit 1; an unreachable server exits 2")
    func failures() throws {
        let usage = try Executables.run("strata-bench", ["--mix", "get=x", "-n", "1"], timeout: 20)
        #expect(usage.status == 1)
        #expect(usage.stderr.contains("--mix"))
        let both = try Executables.run("strata-bench", ["-n", "5", "-d", "1s"], timeout: 20)
        #expect(both.status != 0)
        let threads = try Executables.run("strata-bench", ["--threads", "0", "-n", "1"], timeout: 20)
        #expect(threads.status != 0 && threads.stderr.contains("--threads"))
        let driver = try Executables.run("strata-bench", ["--driver", "raw", "-n", "1"], timeout: 20)
        #expect(driver.status != 0 && driver.stderr.contains("driver"))
        let unreachable = try Executables.run("strata-bench", ["--workload", "books", "--port", "1", "-n", "1"], timeout: 20)
        #expect(unreachable.status == 2, "\(unreachable.stderr)")
        #expect(unreachable.stderr.contains("cannot connect to 127.0.0.1:1: connection refused"), "\(unreachable.stderr)")
    }
}
}
