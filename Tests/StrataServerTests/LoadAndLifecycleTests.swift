import Foundation
import StrataClient
import StrataModel
import StrataWire
import Synchronization
import Testing

/// Counts acknowledged saves across writer tasks.
final class SaveCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// Many clients at once, shutdown with saves in flight, reconnection.
@Suite("Load and lifecycle", .timeLimit(.minutes(2)))
struct LoadAndLifecycleTests {
    @Test("50 clients save and fetch concurrently; every result is their own")
    func fiftyClients() async throws {
        let server = try await TestServer.start()
        let clients = (0..<50).map { server.client("client-\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    let author = "author-\(index)"
                    let inserts = (0..<5).map { Wire.insertBook("b\($0)", title: "Book \(index)-\($0)", pages: Int64($0 + 1), author: author) }
                    let saved = try await client.save(Wire.save(inserts: inserts))
                    #expect(saved.inserted.count == 5)
                    let fetched = try await client.fetch(Wire.fetch("Book", "author == '\(author)'", sort: ["pages"]))
                    #expect(fetched.objects.map(\.id) == saved.inserted.map(\.id))
                    #expect(try fetched.objects.map { try $0.value("title") } == (0..<5).map { .string("Book \(index)-\($0)") })
                    // Pipelined: an update and a count in flight together.
                    let target = fetched.objects[0]
                    async let update = client.save(Wire.save(updates: [Wire.update(target.id, baseVersion: target.version, ["pages": .integer(1000 + Int64(index))])]))
                    async let count = client.count("Book", predicate: "author == '\(author)'")
                    #expect(try await count == 5)
                    #expect(try await update.versions[target.id] == 2)
                }
            }
            try await group.waitForAll()
        }
        let checker = server.client("checker")
        #expect(try await checker.count("Book") == 250)
        #expect(try await checker.count("Book", predicate: "pages >= 1000") == 50)
        for client in clients { await client.close() }
        await checker.close()
        try await server.stop()
    }

    @Test("Shutdown with saves in flight loses none that were acknowledged")
    func shutdownKeepsAcknowledgedSaves() async throws {
        let server = try await TestServer.start()
        let directory = server.directory
        let clients = (0..<10).map { server.client("writer-\($0)") }
        let counter = SaveCounter()
        let acknowledged = try await withThrowingTaskGroup(of: [String].self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    var ids: [String] = []
                    for round in 0..<10_000 {
                        do {
                            let saved = try await client.save(Wire.save(inserts: [Wire.insertBook("b", title: "w\(index)-\(round)")]))
                            ids += saved.inserted.map(\.id)
                            counter.value.add(1, ordering: .relaxed)
                        } catch let error as StrataClientError where error.code == .unavailable {
                            return ids
                        }
                    }
                    return ids
                }
            }
            // Shut down once saves are flowing (bounded wait), with more in flight.
            for _ in 0..<200 where counter.value.load(ordering: .relaxed) < 20 {
                try await Task.sleep(for: .milliseconds(25))
            }
            try await server.stop(removingFiles: false)
            var all: [String] = []
            for try await ids in group { all += ids }
            return all
        }
        for client in clients { await client.close() }
        #expect(acknowledged.count > 0)

        let restarted = try await TestServer.start(directory: directory)
        let reader = restarted.client("reader")
        let refreshed = try await reader.refresh(acknowledged)
        #expect(refreshed.missing.isEmpty)
        #expect(refreshed.objects.count == acknowledged.count)
        await reader.close()
        try await restarted.stop()
    }

    @Test("The client reconnects after the server restarts and renews its subscriptions")
    func reconnectAfterRestart() async throws {
        let first = try await TestServer.start()
        let port = first.port
        let directory = first.directory
        let watcher = first.client("watcher")
        let notifications = try await watcher.subscribe(entity: "Book")
        #expect(try await watcher.count("Book") == 0)
        try await first.stop(removingFiles: false)

        let second = try await TestServer.start(directory: directory) { $0.port = port }
        // The next request reconnects; the subscription is renewed in the background.
        var count: Int?
        for _ in 0..<50 where count == nil {
            count = try? await watcher.count("Book")
            if count == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(count == 0)
        let writer = second.client("writer")
        // Saves until the renewed subscription reports one (bounded). The
        // stream is awaited once: cancelling a wait on an AsyncStream
        // finishes it, so a wait per save would end it at its first timeout.
        let writing = Task {
            for attempt in 0..<40 {
                _ = try? await writer.save(Wire.save(inserts: [Wire.insertBook("b", title: "after restart \(attempt)")]))
                try await Task.sleep(for: .milliseconds(250))
            }
        }
        let note = await next(notifications, within: .seconds(15))
        writing.cancel()
        #expect(note?.inserted.count == 1)
        await watcher.close()
        await writer.close()
        try await second.stop()
    }
}
