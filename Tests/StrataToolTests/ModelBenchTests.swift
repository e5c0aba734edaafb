import Foundation
import Testing

/// `strata-bench` against a model that is not the bundled sample
/// (`Tests/ModelFixtures/Warehouse.contents`): generated values within the
/// model's bounds and constraints, the report's arithmetic, its outputs,
/// thresholds and exit statuses.
extension ToolTests {
@Suite("strata-bench on any model", .serialized, .timeLimit(.minutes(2)))
struct ModelBenchTests {
    static let model = Executables.packageRoot.appendingPathComponent("Tests/ModelFixtures/Warehouse.contents").path

    private static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    private static func int(_ value: Any?) -> Int? { (value as? NSNumber)?.intValue }

    private static func bench(_ server: LiveServer, _ arguments: [String]) throws -> Executables.Run {
        try Executables.run("strata-bench", ["--port", "\(server.port)"] + arguments, timeout: 60)
    }

    @Test("Inserts, updates and reads of a model's entity: values within bounds, unique where constrained, figures that add up")
    func loadAModel() throws {
        let server = try LiveServer.start(["--model", Self.model])
        defer { server.stop() }
        let folder = server.dataDirectory
        let hgrm = folder.appendingPathComponent("run.hgrm"), series = folder.appendingPathComponent("run.csv")
        let run = try Self.bench(server, [
            "--entity", "Item", "-c", "4", "-n", "300", "--dataset", "50",
            "--mix", "get=40,query=20,count=10,insert=20,update=10", "--max-error-rate", "100%",
            "--json", "--hgrm", hgrm.path, "--timeseries", series.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try Self.object(run.stdout)
        #expect(Self.int(report["requests"]) == 300)
        let errors = try #require(report["errors"] as? [String: Any])
        let failed = errors.values.compactMap(Self.int).reduce(0, +)
        #expect(Self.int(report["ok"]).map { $0 + failed } == 300)
        // Only conflicting updates may fail: the values are all valid.
        #expect(Set(errors.keys).isSubset(of: ["ABORTED"]), "\(errors)")
        let operations = try #require(report["operations"] as? [String: Any])
        var sum = 0
        for (_, value) in operations { sum += Self.int((value as? [String: Any])?["requests"]) ?? 0 }
        #expect(sum == 300)
        let seconds = try #require((report["durationSeconds"] as? NSNumber)?.doubleValue)
        let throughput = try #require((report["throughputRps"] as? NSNumber)?.doubleValue)
        #expect(abs(throughput - 300 / seconds) <= max(1, throughput * 0.01), "throughput \(throughput) for 300 requests in \(seconds) s")
        #expect((report["settings"] as? [String: Any])?["entity"] as? String == "Item")

        // The time series adds up to the same requests.
        let lines = try String(contentsOf: series, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "second,requests,errors,throughput_rps,p50_ms,p99_ms")
        #expect(lines.dropFirst().compactMap { Int($0.split(separator: ",")[1]) }.reduce(0, +) == 300)
        #expect(try String(contentsOf: hgrm, encoding: .utf8).contains("Total count    =          300"))

        // Every insert is stored, within the model's bounds.
        let inserted = (operations["insert"] as? [String: Any]).flatMap { Self.int($0["ok"]) } ?? -1
        #expect(inserted > 0)
        let cli = CLI(server: server)
        #expect(try cli.succeed(["count", "Item"]).trimmingCharacters(in: .whitespacesAndNewlines) == "\(50 + inserted)")
        let outside = "quantity < 0 OR quantity > 10000 OR price < 0 OR price > 999.99 OR serial < 1 OR receivedAt == nil OR label == nil OR uid == nil OR sku == nil"
        #expect(try cli.succeed(["count", "Item", "--where", outside]).trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        #expect(try cli.succeed(["count", "Item", "--where", "code != nil"]).trimmingCharacters(in: .whitespacesAndNewlines) == "0", "a patterned optional string is left out")
    }

    @Test("Unique values stay unique across seeding, warmup and the run, in narrow ranges; one-sided bounds are kept", arguments: ["wire", "client"])
    func uniqueAndOneSided(driver: String) throws {
        let server = try LiveServer.start(["--model", Self.model])
        defer { server.stop() }
        let run = try Self.bench(server, ["--entity", "Shelf", "--dataset", "200", "--warmup", "300ms", "-n", "300", "-c", "4", "--mix", "insert=1", "--driver", driver, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try Self.object(run.stdout)
        #expect((report["errors"] as? [String: Any])?.isEmpty == true, "\(run.stdout)")
        let cli = CLI(server: server)
        let shelves = try #require(Int(try cli.succeed(["count", "Shelf"]).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(shelves >= 500)
        let outside = "depth > -5 OR openedAt > CAST(-31622400, 'NSDate') OR badge MATCHES '.{7,}'"
        #expect(try cli.succeed(["count", "Shelf", "--where", outside]).trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    @Test("What cannot be generated is refused at start, naming the property; --values supplies it")
    func mandatoryRelationshipNeedsValues() throws {
        let server = try LiveServer.start(["--model", Self.model])
        defer { server.stop() }
        let refused = try Self.bench(server, ["--entity", "Movement", "-n", "10", "--mix", "insert=1"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("Movement.item"), "\(refused.stderr)")
        let cli = CLI(server: server)
        let item = try cli.succeed(["insert", "Item", "sku=ITEM-1", "serial=1", "label=One", "receivedAt=2026-01-01T00:00:00Z", "uid=\(UUID().uuidString)"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let values = server.dataDirectory.appendingPathComponent("movements.jsonl")
        try Data("{\"item\": \"\(item)\", \"delta\": 5}\n{\"item\": \"\(item)\", \"delta\": -3}\n".utf8).write(to: values)
        // One connection: concurrent inserts under one Item change its
        // movements together and conflict (optimistic locking, as in Core Data).
        let run = try Self.bench(server, ["--entity", "Movement", "-c", "1", "-n", "20", "--mix", "insert=1", "--values", values.path, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try cli.succeed(["count", "Movement", "--where", "item != nil AND delta IN {5, -3}"]).trimmingCharacters(in: .whitespacesAndNewlines) == "20")
        // A bad line names itself: a wrong type, a value out of the
        // model's bounds, an ID that is not one, or of another entity.
        for (line, complaint) in [
            ("{\"delta\": \"many\"}", "--values line 1: delta"),
            ("{\"item\": \"\(item)\", \"delta\": 5000}", "above the model's maximum"),
            ("{\"item\": \"foo\"}", "is not an object ID"),
            ("{\"item\": \"\(item.replacingOccurrences(of: "/Item/", with: "/Shelf/"))\"}", "an object of Shelf, not of Item"),
        ] {
            try Data((line + "\n").utf8).write(to: values)
            let bad = try Self.bench(server, ["--entity", "Movement", "-n", "1", "--mix", "insert=1", "--values", values.path])
            #expect(bad.status == 1, "\(line): \(bad.stderr)")
            #expect(bad.stderr.contains(complaint), "\(line): \(bad.stderr)")
        }
    }

    @Test("--timeout fails slow requests as DEADLINE_EXCEEDED; --ramp grows an open loop's rate linearly", arguments: ["wire", "client"])
    func timeoutAndRamp(driver: String) throws {
        let server = try LiveServer.start(["--model", Self.model])
        defer { server.stop() }
        // No answer comes within a microsecond: every request times out.
        let late = try Self.bench(server, ["--entity", "Shelf", "--dataset", "5", "-n", "40", "-c", "2", "--driver", driver, "--timeout", "1us", "--json"])
        #expect(late.status == 5, "\(late.stderr)")
        let report = try Self.object(late.stdout)
        #expect(Self.int(report["requests"]) == 40)
        #expect((report["errors"] as? [String: Any]).map { Set($0.keys) } == ["DEADLINE_EXCEEDED"], "\(late.stdout)")
        // 200/s reached over the whole 2 s: half the requests of a flat run.
        let ramped = try Self.bench(server, ["--entity", "Shelf", "--mix", "count=1", "--rps", "200", "-d", "2s", "--ramp", "2s", "--driver", driver, "--json"])
        #expect(ramped.status == 0, "\(ramped.stderr)")
        let requests = try #require(Self.int(try Self.object(ramped.stdout)["requests"]))
        #expect((150...215).contains(requests), "\(requests) requests")
        // A closed loop ramps its requests in flight.
        let closed = try Self.bench(server, ["--entity", "Shelf", "--mix", "count=1", "-c", "4", "-d", "1s", "--ramp", "500ms", "--driver", driver, "-q"])
        #expect(closed.status == 0, "\(closed.stderr)")
    }

    @Test("Never writes unasked; names the entities; thresholds and failures set the exit status")
    func exitStatuses() throws {
        let server = try LiveServer.start(["--model", Self.model])
        defer { server.stop() }
        let which = try Self.bench(server, ["-n", "10"])
        #expect(which.status == 1)
        #expect(which.stderr.contains("Item, Movement, Shelf"), "\(which.stderr)")
        // The default mix reads: an empty entity is refused, nothing is written.
        let empty = try Self.bench(server, ["--entity", "Shelf", "-n", "10"])
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("--dataset"), "\(empty.stderr)")
        #expect(try CLI(server: server).succeed(["count", "Shelf"]).trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        // A latency threshold no server meets: exit 6; CSV for the figures.
        let slow = try Self.bench(server, ["--entity", "Shelf", "--dataset", "5", "-n", "50", "--p99-under", "1us", "--csv"])
        #expect(slow.status == 6, "\(slow.stderr)")
        #expect(slow.stderr.contains("p99 latency"), "\(slow.stderr)")
        let csv = slow.stdout.split(separator: "\n")
        #expect(csv.first?.hasPrefix("operation,requests,ok,errors,throughput_rps") == true)
        #expect(csv.last?.hasPrefix("all,50,50,0,") == true, "\(slow.stdout)")
        // Failed requests: exit 5 (a query the server refuses).
        let failing = try Self.bench(server, ["--entity", "Shelf", "-n", "5", "--mix", "query=1", "--where", "name MATCHES '('"])
        #expect(failing.status == 5, "\(failing.stderr)")
        let tolerated = try Self.bench(server, ["--entity", "Shelf", "-n", "5", "--mix", "query=1", "--where", "name MATCHES '('", "--max-error-rate", "100%", "-q"])
        #expect(tolerated.status == 0, "\(tolerated.stderr)")
        #expect(tolerated.stdout.isEmpty)
    }
}
}
