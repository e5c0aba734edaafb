import Foundation
import GRDB
import StrataClient
import StrataModel
import StrataPostgresTesting
import StrataWire
import Testing

/// Where the servers of a multi-process test keep the sample's stores:
/// SQLite files in one shared data directory, or schemas of one
/// PostgreSQL database (where a server is configured: always in CI).
enum SharedBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    static var allCases: [SharedBackend] {
        [.sqlite] + (PostgresTestServer.isEnabled ? [.postgres] : [])
    }

    var testDescription: String { rawValue }

    /// A fresh place for the stores: the data directory every server
    /// uses, and the `--store` options that put the stores there.
    func makeShared() throws -> (data: URL, options: [String]) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-shared-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        guard self == .postgres else { return (url, []) }
        let base = try #require(PostgresTestServer.url, "STRATA_POSTGRES_URL")
        let books = PostgresTestServer.uniqueSchemaName("mp"), feedback = PostgresTestServer.uniqueSchemaName("mp")
        return (url, ["--store", "Book=postgres:\(base)?schema=\(books)", "--store", "Feedback=postgres:\(base)?schema=\(feedback)"])
    }
}

/// Several `strata-server` processes on one store (SQLite files in one data
/// directory, or one PostgreSQL database): saves through one reach the
/// others' subscribers, concurrent writers lose nothing, a writer killed
/// mid-save leaves a sound store.
extension ToolTests {
@Suite("Many processes on one store", .serialized, .timeLimit(.minutes(3)))
struct MultiProcessTests {
    /// A fresh shared data directory.
    private func sharedDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-shared-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func client(_ server: LiveServer, _ name: String) -> StrataClient {
        StrataClient(configuration: ClientConfiguration(host: "127.0.0.1", port: server.port, clientName: name, connectTimeout: .seconds(5)))
    }

    private static func insertBook(_ title: String, pages: Int64 = 100) -> Strata_V1_SaveRequest {
        Strata_V1_SaveRequest.with {
            $0.inserts = [Strata_V1_InsertedObject.with {
                $0.temporaryID = "b"
                $0.entity = "Book"
                $0.values["uuid"] = PropertyValue.uuid(UUID()).wire
                $0.values["title"] = PropertyValue.string(title).wire
                $0.values["pages"] = PropertyValue.integer(pages).wire
            }]
        }
    }

    private static func pages(_ state: Strata_V1_ObjectState) throws -> Int64 {
        guard let wire = state.values["pages"], case .integer(let pages) = try PropertyValue(wire: wire, field: "pages") else {
            throw StrataClientError(.internal, "\(state.id) has no pages")
        }
        return pages
    }

    @Test("A save through one server reaches a subscriber of another; its refresh shows the change", arguments: SharedBackend.allCases)
    func notificationsCrossProcesses(_ backend: SharedBackend) async throws {
        let (data, stores) = try backend.makeShared()
        defer { try? FileManager.default.removeItem(at: data) }
        let a = try LiveServer.start(["--history-consumer", "a"] + stores, dataDirectory: data)
        defer { a.stop() }
        let b = try LiveServer.start(["--history-consumer", "b"] + stores, dataDirectory: data)
        defer { b.stop() }
        let writer = client(a, "writer-on-a")
        let watcher = client(b, "watcher-on-b")

        let notifications = try await watcher.subscribe(entity: "Book")
        var iterator = notifications.makeAsyncIterator()
        let saved = try await writer.save(Self.insertBook("Solaris"))
        let id = try #require(saved.inserted.first?.id)
        let inserted = try #require(await iterator.next())
        #expect(inserted.inserted.map(\.id) == [id])
        #expect(inserted.inserted.first?.version == 1)
        #expect(inserted.origin == "writer-on-a")
        #expect(try await watcher.refresh([id]).objects.first?.values["title"] == PropertyValue.string("Solaris").wire)

        _ = try await writer.save(Strata_V1_SaveRequest.with {
            $0.updates = [Strata_V1_UpdatedObject.with {
                $0.id = id
                $0.baseVersion = 1
                $0.values["title"] = PropertyValue.string("Solaris (1961)").wire
            }]
        })
        let updated = try #require(await iterator.next())
        #expect(updated.updated.map(\.id) == [id])
        #expect(updated.updated.first?.changedKeys.contains("title") == true)
        #expect(updated.updated.first?.version == 2)
        let refreshed = try #require(try await watcher.refresh([id]).objects.first)
        #expect(refreshed.values["title"] == PropertyValue.string("Solaris (1961)").wire)
        #expect(refreshed.version == 2)

        // Both servers read the same history, through the CLI as well.
        let history = try await watcher.history(store: "Book")
        #expect(history.transactions.count == 2)
        #expect(history.transactions.map(\.author) == ["writer-on-a", "writer-on-a"])
        #expect(history.transactions.last?.changes.first?.changedKeys.contains("title") == true)
        let cli = try Executables.run("strata", ["history", "--port", String(b.port), "--store", "Book", "--after", "1", "--json"])
        #expect(cli.status == 0, "\(cli.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any]
        let transactions = json?["transactions"] as? [[String: Any]]
        #expect(transactions?.count == 1)
        #expect((transactions?.first?["changes"] as? [[String: Any]])?.first?["kind"] as? String == "update")
    }

    @Test("PostgreSQL: other servers' saves reach a subscriber exactly once across lost notification connections", .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipComment)))
    func lostNotificationConnections() async throws {
        let (data, stores) = try SharedBackend.postgres.makeShared()
        defer { try? FileManager.default.removeItem(at: data) }
        let a = try LiveServer.start(["--history-consumer", "a"] + stores, dataDirectory: data)
        defer { a.stop() }
        let b = try LiveServer.start(["--history-consumer", "b"] + stores, dataDirectory: data)
        defer { b.stop() }
        let writer = client(a, "writer-on-a")
        let watcher = client(b, "watcher-on-b")
        var notifications = try await watcher.subscribe(entity: "Book").makeAsyncIterator()
        let total = 60
        let saving = Task {
            var ids: [String] = []
            for i in 0..<total {
                ids.append(try #require(try await writer.save(Self.insertBook("cut-\(i)")).inserted.first?.id))
                // Twice mid-stream, every server's LISTEN connection is cut.
                // (The second cut waits for the watchers to be back from the first.)
                if i == 20 || i == 40 {
                    var ended = 0
                    let until = ContinuousClock.now.advanced(by: .seconds(15))
                    while ended == 0, ContinuousClock.now < until {
                        ended = try await PostgresTestServer.terminateListeners()
                        if ended == 0 { try await Task.sleep(for: .milliseconds(50)) }
                    }
                    #expect(ended > 0, "no change watcher to cut")
                }
            }
            return ids
        }
        var announced: [String] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while announced.count < total, ContinuousClock.now < deadline {
            guard let notification = await notifications.next() else { break }
            announced += notification.inserted.map(\.id)
        }
        let saved = try await saving.value
        #expect(announced.count == total, "announced \(announced.count) of \(total)")
        #expect(Set(announced) == Set(saved))
        #expect(Set(announced).count == announced.count, "an insert was announced twice")
    }

    @Test("A history consumer following through a server that restarts mid-stream gets every change once", arguments: SharedBackend.allCases)
    func restartedServerMissesNoChange(_ backend: SharedBackend) async throws {
        let (data, stores) = try backend.makeShared()
        defer { try? FileManager.default.removeItem(at: data) }
        let a = try LiveServer.start(["--history-consumer", "a"] + stores, dataDirectory: data)
        defer { a.stop() }
        var b = try LiveServer.start(["--history-consumer", "b"] + stores, dataDirectory: data)
        defer { b.stop() }
        let writer = client(a, "writer-on-a")
        let total = 80
        let saving = Task {
            var ids: [String] = []
            for i in 0..<total {
                ids.append(try #require(try await writer.save(Self.insertBook("stream-\(i)")).inserted.first?.id))
                try await Task.sleep(for: .milliseconds(5))
            }
            return ids
        }
        // A downstream consumer reads Book's history through B, recording
        // its token with each read, as a replicating service would.
        var token: UInt64 = 0
        var seen: [String] = []
        var tokens: [UInt64] = []
        var reader = client(b, "consumer")
        var restarted = false
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while seen.count < total, ContinuousClock.now < deadline {
            if !restarted, seen.count >= total / 3 {
                // B goes away mid-stream and comes back (on another port).
                await reader.close()
                b.stop(removingFiles: false)
                b = try LiveServer.start(["--history-consumer", "b"] + stores, dataDirectory: data)
                reader = client(b, "consumer")
                restarted = true
            }
            let history = try await reader.history(store: "Book", afterToken: token, consumer: "downstream")
            for transaction in history.transactions {
                tokens.append(transaction.token)
                seen += transaction.changes.filter { $0.kind == .insert }.map(\.id)
            }
            if let last = history.transactions.last?.token { token = last } else { try await Task.sleep(for: .milliseconds(20)) }
        }
        let saved = try await saving.value
        #expect(restarted)
        #expect(seen == saved, "history through the restarted server: \(seen.count) of \(saved.count) inserts, in order")
        #expect(tokens == Array(1...UInt64(total)), "tokens are consecutive, each once")
        await reader.close()
    }

    @Test("Merge policies resolve a conflict between two processes as within one", arguments: SharedBackend.allCases)
    func mergePoliciesAcrossProcesses(_ backend: SharedBackend) async throws {
        let (data, stores) = try backend.makeShared()
        defer { try? FileManager.default.removeItem(at: data) }
        let a = try LiveServer.start(["--history-consumer", "a"] + stores, dataDirectory: data)
        defer { a.stop() }
        let b = try LiveServer.start(["--history-consumer", "b"] + stores, dataDirectory: data)
        defer { b.stop() }
        let first = client(a, "first")
        let second = client(b, "second")
        let id = try #require(try await first.save(Self.insertBook("Ubik", pages: 200)).inserted.first?.id)
        func update(_ client: StrataClient, _ key: String, _ value: PropertyValue, base: PropertyValue, policy: Strata_V1_MergePolicy) async throws -> Strata_V1_SaveResponse {
            try await client.save(Strata_V1_SaveRequest.with {
                $0.mergePolicy = policy
                $0.updates = [Strata_V1_UpdatedObject.with {
                    $0.id = id
                    $0.baseVersion = 1
                    $0.values[key] = value.wire
                    $0.baseValues[key] = base.wire
                }]
            })
        }
        // Both read version 1; A changes the title, then B (another process) the pages.
        _ = try await update(first, "title", .string("Ubik (1969)"), base: .string("Ubik"), policy: .error)
        do {
            _ = try await update(second, "pages", .integer(202), base: .integer(200), policy: .error)
            Issue.record("a stale update through another process was accepted")
        } catch let error as StrataClientError {
            #expect(error.strataCode == 133020)
            #expect(error.conflicts.first?.currentVersion == 2)
        }
        let merged = try await update(second, "pages", .integer(202), base: .integer(200), policy: .mergeByPropertyObjectTrump)
        #expect(merged.versions[id] == 3)
        let state = try #require(try await first.refresh([id]).objects.first)
        #expect(state.values["title"] == PropertyValue.string("Ubik (1969)").wire)
        #expect(state.values["pages"] == PropertyValue.integer(202).wire)
        #expect(state.version == 3)
    }

    /// What one writer client saw.
    struct WriterReport: Sendable {
        var acknowledged: [String] = []
        var increments: [String: Int] = [:]
        var conflicts = 0
        var failures: [String] = []
        /// When the last write was acknowledged.
        var lastAcknowledged: ContinuousClock.Instant?
    }

    /// A save of `count` books titled `<batch>-<i>`.
    private static func insertBooks(batch: String, count: Int) -> Strata_V1_SaveRequest {
        Strata_V1_SaveRequest.with { request in
            request.inserts = (0..<count).map { i in
                Strata_V1_InsertedObject.with {
                    $0.temporaryID = "b\(i)"
                    $0.entity = "Book"
                    $0.values["uuid"] = PropertyValue.uuid(UUID()).wire
                    $0.values["title"] = PropertyValue.string("\(batch)-\(i)").wire
                    $0.values["pages"] = PropertyValue.integer(Int64(i + 1)).wire
                }
            }
        }
    }

    /// Inserts books with unique titles and increments shared counters
    /// (read, then save with the version read) until `deadline`.
    private static func write(_ client: StrataClient, name: String, counters: [String], until deadline: ContinuousClock.Instant) async -> WriterReport {
        var report = WriterReport()
        var n = 0
        while ContinuousClock.now < deadline {
            n += 1
            let title = "\(name)-\(n)"
            do {
                _ = try await client.save(insertBook(title))
                report.acknowledged.append(title)
                report.lastAcknowledged = .now
            } catch {
                report.failures.append("insert \(title): \(error)")
            }
            let counter = counters[n % counters.count]
            do {
                let state = try #require(try await client.refresh([counter]).objects.first)
                let pages = try Self.pages(state)
                _ = try await client.save(Strata_V1_SaveRequest.with {
                    $0.updates = [Strata_V1_UpdatedObject.with {
                        $0.id = counter
                        $0.baseVersion = state.version
                        $0.values["pages"] = PropertyValue.integer(pages + 1).wire
                    }]
                })
                report.increments[counter, default: 0] += 1
                report.lastAcknowledged = .now
            } catch let error as StrataClientError where error.strataCode == 133020 {
                report.conflicts += 1
            } catch {
                report.failures.append("increment \(counter): \(error)")
            }
        }
        return report
    }

    /// Every `Book` title in the store with its count, and the counters' states.
    private func titles(_ client: StrataClient) async throws -> [String: Int] {
        let result = try await client.fetch(Strata_V1_FetchRequest.with { $0.entity = "Book" })
        var titles: [String: Int] = [:]
        for object in result.objects {
            if let wire = object.values["title"], case .string(let title) = try PropertyValue(wire: wire, field: "title") {
                titles[title, default: 0] += 1
            }
        }
        return titles
    }

    private func integrityCheck(_ file: URL) throws -> String {
        let queue = try DatabaseQueue(path: file.path)
        defer { try? queue.close() }
        return try queue.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "" }
    }

    @Test("Four writer processes: every acknowledged write is there once, versions add up, no locking error", arguments: SharedBackend.allCases)
    func fourWriterProcesses(_ backend: SharedBackend) async throws {
        let (data, stores) = try backend.makeShared()
        defer { try? FileManager.default.removeItem(at: data) }
        var servers: [LiveServer] = []
        defer { for server in servers { server.stop() } }
        for i in 0..<4 { servers.append(try LiveServer.start(["--history-consumer", "w\(i)"] + stores, dataDirectory: data)) }
        let clients = servers.enumerated().flatMap { i, server in (0..<2).map { client(server, "w\(i)-\($0)") } }

        var counters: [String] = []
        for i in 0..<3 {
            counters.append(try #require(try await clients[0].save(Self.insertBook("counter-\(i)", pages: 0)).inserted.first?.id))
        }
        // Rounds of 4 s, another (up to 5) while no more than 40 inserts were
        // acknowledged: run beside every other suite on 2 cores, the four
        // processes can get little CPU (38 inserts in one CI run; 1,200
        // when the test runs alone).
        var reports: [WriterReport] = []
        for round in 0..<5 where reports.reduce(0, { $0 + $1.acknowledged.count }) <= 40 {
            let deadline = ContinuousClock.now.advanced(by: .seconds(4))
            reports += await withTaskGroup(of: WriterReport.self) { group in
                for (i, client) in clients.enumerated() {
                    let counters = counters
                    group.addTask { await Self.write(client, name: "c\(i)r\(round)", counters: counters, until: deadline) }
                }
                var reports: [WriterReport] = []
                for await report in group { reports.append(report) }
                return reports
            }
        }
        let failures = reports.flatMap(\.failures)
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        let acknowledged = reports.flatMap(\.acknowledged)
        #expect(acknowledged.count > 40)

        // Read through another server than most writers used.
        let titles = try await titles(clients[7])
        for title in acknowledged { #expect(titles[title] == 1, "\(title) is there \(titles[title] ?? 0) times") }
        #expect(titles.keys.filter { !$0.hasPrefix("counter-") }.count == acknowledged.count)
        let states = try await clients[5].refresh(counters).objects
        for state in states {
            let increments = reports.reduce(0) { $0 + ($1.increments[state.id] ?? 0) }
            #expect(try Self.pages(state) == Int64(increments), "\(state.id)")
            #expect(state.version == Int64(1 + increments), "\(state.id)")
        }
        print("four writer processes: \(acknowledged.count) inserts, \(reports.reduce(0) { $0 + $1.increments.values.reduce(0, +) }) increments, \(reports.reduce(0) { $0 + $1.conflicts }) conflicts")
        for server in servers { server.stop(removingFiles: false) }
        if backend == .sqlite { #expect(try integrityCheck(data.appendingPathComponent("Books.sqlite")) == "ok") }
    }

    @Test("A writer process killed with SIGKILL mid-save: the store is sound, the others go on, nothing acknowledged is lost", arguments: SharedBackend.allCases)
    func killedWriter(_ backend: SharedBackend) async throws {
        let (data, stores) = try backend.makeShared()
        defer { try? FileManager.default.removeItem(at: data) }
        var servers: [LiveServer] = []
        defer { for server in servers { server.stop() } }
        for i in 0..<3 { servers.append(try LiveServer.start(["--history-consumer", "k\(i)"] + stores, dataDirectory: data)) }
        let clients = servers.enumerated().flatMap { i, server in (0..<2).map { client(server, "k\(i)-\($0)") } }
        let counter = try #require(try await clients[2].save(Self.insertBook("counter", pages: 0)).inserted.first?.id)

        let start = ContinuousClock.now
        let victim = servers[0].process.processIdentifier
        // Large saves back to back on the victim, so that the kill finds one
        // being written (each takes far longer than the gap between them).
        let bulkClient = client(servers[0], "bulk")
        // The kill waits for the first bulk save's answer (however slowly a
        // loaded machine runs), so that a save finished before it.
        let (firstAcknowledged, signal) = AsyncStream<Void>.makeStream()
        let bulk = Task {
            defer { signal.finish() }
            var sent: [String] = []
            var acknowledged: [String] = []
            var failed = false
            while !failed, sent.count < 200 {
                let batch = "bulk\(sent.count)"
                sent.append(batch)
                do {
                    _ = try await bulkClient.save(Self.insertBooks(batch: batch, count: Self.bulkSize))
                    acknowledged.append(batch)
                    signal.yield()
                } catch {
                    failed = true
                }
            }
            return (sent, acknowledged, failed)
        }
        let killer = Task {
            try await Task.sleep(for: .milliseconds(1500))
            for await _ in firstAcknowledged { break }
            // The next save is under way by now.
            try await Task.sleep(for: .milliseconds(100))
            kill(victim, SIGKILL)
            return ContinuousClock.now
        }
        let reports = await withTaskGroup(of: (Int, WriterReport).self) { group in
            for (i, client) in clients.enumerated() {
                // Long enough past the kill (1.6 s in, later on a loaded
                // machine) for the survivors to show they go on.
                group.addTask { (i, await Self.write(client, name: "k\(i)", counters: [counter], until: start.advanced(by: .seconds(4)))) }
            }
            var reports: [(Int, WriterReport)] = []
            for await report in group { reports.append(report) }
            return reports.sorted { $0.0 < $1.0 }.map(\.1)
        }
        let killedAt = try await killer.value
        let (bulkSent, bulkAcknowledged, bulkCut) = await bulk.value
        #expect(!servers[0].process.isRunning)
        #expect(bulkCut, "the bulk writer's last save was not cut off by the kill")
        #expect(!bulkAcknowledged.isEmpty, "no bulk save finished before the kill: nothing shows saves were under way")

        // The survivors' clients saw no error and went on writing well after
        // the kill; the killed server's clients lost their connection (and
        // nothing else).
        for report in reports[2...] { #expect(report.failures.isEmpty, "\(report.failures.prefix(3))") }
        #expect(reports[2...].allSatisfy { $0.acknowledged.count > 5 })
        for report in reports[2...] {
            let last = try #require(report.lastAcknowledged)
            #expect(last > killedAt, "a surviving writer stopped making progress after the kill")
        }

        let titles = try await titles(clients[4])
        // Each bulk save is all or nothing, the one cut off by the kill too;
        // every acknowledged one is there in full.
        for batch in bulkSent {
            let present = (0..<Self.bulkSize).reduce(0) { $0 + (titles["\(batch)-\($1)"] ?? 0) }
            #expect(present == 0 || present == Self.bulkSize, "\(batch): \(present) of \(Self.bulkSize) books")
            if bulkAcknowledged.contains(batch) { #expect(present == Self.bulkSize, "acknowledged \(batch) has \(present) books") }
        }
        let cut = bulkSent.last.map { batch in (0..<Self.bulkSize).reduce(0) { $0 + (titles["\(batch)-\($1)"] ?? 0) } } ?? 0
        print("killed writer: \(bulkAcknowledged.count) bulk saves of \(Self.bulkSize) acknowledged before the kill; the one cut off has \(cut) books (committed unanswered, or rolled back)")
        for report in reports {
            for title in report.acknowledged { #expect(titles[title] == 1, "\(title) is there \(titles[title] ?? 0) times") }
        }
        let increments = reports.reduce(0) { $0 + ($1.increments[counter] ?? 0) }
        let state = try #require(try await clients[3].refresh([counter]).objects.first)
        // An increment acknowledged by the killed server is counted; one it
        // committed without answering may add one more.
        #expect(try Self.pages(state) >= Int64(increments))
        #expect(try Self.pages(state) <= Int64(increments + 2))
        #expect(state.version == 1 + (try Self.pages(state)))
        for server in servers { server.stop(removingFiles: false) }
        if backend == .sqlite {
            #expect(try integrityCheck(data.appendingPathComponent("Books.sqlite")) == "ok")
            #expect(try integrityCheck(data.appendingPathComponent("Feedback.sqlite")) == "ok")
        }
    }

    /// Books per bulk save in ``killedWriter()``.
    static let bulkSize = 2_000

    @Test("strata-bench --watch-port measures how long another server takes to announce each insert", arguments: SharedBackend.allCases)
    func benchMeasuresNotificationLatency(_ backend: SharedBackend) throws {
        let (data, stores) = try backend.makeShared()
        defer { try? FileManager.default.removeItem(at: data) }
        let a = try LiveServer.start(["--history-consumer", "a"] + stores, dataDirectory: data)
        defer { a.stop() }
        let b = try LiveServer.start(["--history-consumer", "b"] + stores, dataDirectory: data)
        defer { b.stop() }
        let run = try Executables.run("strata-bench", [
            "--workload", "books", "--port", "\(a.port)", "--watch-port", "\(b.port)", "-c", "2", "-n", "100", "--mix", "insert=100", "--json",
        ], timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let notification = try #require(report["notification"] as? [String: Any])
        #expect((notification["matched"] as? NSNumber)?.intValue == 100)
        #expect((notification["missing"] as? NSNumber)?.intValue == 0)
        let latency = try #require(notification["latencyMs"] as? [String: Any])
        let p50 = (latency["p50"] as? NSNumber)?.doubleValue ?? -1
        let max = (latency["max"] as? NSNumber)?.doubleValue ?? -1
        #expect(p50 >= 0 && p50 <= max)
    }

    @Test("A binary store cannot be shared: a second process gets a clear error")
    func binaryStoreIsSingleProcess() throws {
        let data = try sharedDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let stores = ["--store", "Book=binary:Books.strata", "--store", "Feedback=memory"]
        let first = try LiveServer.start(stores, dataDirectory: data)
        defer { first.stop() }
        let second = try Executables.run("strata-server", ["--port", "0", "--data-dir", data.path] + stores, timeout: 20)
        #expect(second.status != 0)
        #expect(second.stderr.contains("open in another process"), "\(second.stderr)")
    }
}
}
