import Foundation
import StrataClient
import StrataWire
import Testing

/// The server process against many connections: its descriptor limit
/// caps what it promises, connections past the cap are refused at once,
/// and idle connections cost little memory. Counts come from
/// `STRATA_IDLE_CONNECTIONS` (default 1000).
extension ToolTests {
@Suite("Connection limits", .serialized, .timeLimit(.minutes(3)))
struct ConnectionLimitTests {
    /// A process's resident memory in MiB, from /proc.
    static func residentMiB(of pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    /// Opens a client and says hello; the refusal if there is one.
    static func connect(port: Int, name: String) async -> (StrataClient, StrataClientError?) {
        let client = StrataClient(configuration: ClientConfiguration(host: "127.0.0.1", port: port, clientName: name, connectTimeout: .seconds(5)))
        do {
            _ = try await client.connect()
            return (client, nil)
        } catch let error as StrataClientError {
            return (client, error)
        } catch {
            return (client, StrataClientError(.unknown, "\(error)"))
        }
    }

    @Test("With 256 descriptors the server caps its connections, says so, and refuses the rest at once")
    func descriptorLimitCapsConnections() async throws {
        let server = try LiveServer.start(descriptorLimit: 256)
        defer { server.stop() }
        #expect(server.log.contains("serving at most 128 connections, not 10000"), "\(server.log)")
        var clients: [StrataClient] = []
        var refused = 0
        let started = ContinuousClock.now
        for i in 0..<300 {
            let (client, error) = await Self.connect(port: server.port, name: "c\(i)")
            clients.append(client)
            if let error {
                #expect(error.code == .resourceExhausted, "\(error)")
                refused += 1
            }
        }
        let elapsed = ContinuousClock.now - started
        #expect(refused == 172, "\(refused) refused")
        print("limits: 300 connections to a server with 256 descriptors: 128 served, \(refused) refused, in \(elapsed)")
        for client in clients { await client.close() }
        // Once they are gone, a new client is served.
        try await Task.sleep(for: .milliseconds(300))
        let (witness, error) = await Self.connect(port: server.port, name: "witness")
        #expect(error == nil)
        #expect(try await witness.ping() < .seconds(10))
        await witness.close()
        #expect(server.process.isRunning)
    }

    @Test("Idle connections cost little memory")
    func idleConnectionsMemory() async throws {
        let count = Int(ProcessInfo.processInfo.environment["STRATA_IDLE_CONNECTIONS"] ?? "") ?? 1000
        let server = try LiveServer.start()
        defer { server.stop() }
        let pid = server.process.processIdentifier
        let before = Self.residentMiB(of: pid)
        var clients: [StrataClient] = []
        for i in 0..<count {
            let (client, error) = await Self.connect(port: server.port, name: "idle\(i)")
            #expect(error == nil)
            clients.append(client)
        }
        try await Task.sleep(for: .milliseconds(500))
        let after = Self.residentMiB(of: pid)
        print("limits: \(count) idle connections: server RSS \(before) MiB → \(after) MiB")
        // The goal is 200 MiB for 1000 idle connections.
        #expect(after <= 200 * max(1, count / 1000), "\(after) MiB for \(count) idle connections")
        for client in clients { await client.close() }
    }
}
}
