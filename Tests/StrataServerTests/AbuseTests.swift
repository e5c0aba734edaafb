import Foundation
import NIOConcurrencyHelpers
import NIOCore
import StrataClient
import StrataModel
import StrataServer
import StrataWire
import SwiftProtobuf
import Testing

/// The server's limits under abuse, through real sockets: while one
/// client misbehaves, another's pings are still answered (asserted with a
/// generous bound; the worst latency is printed for the figures)
/// and the server's memory stays bounded. Sizes come from
/// `STRATA_ABUSE_SCALE` (1 by default: the CI size).
@Suite("Abuse", .serialized, .timeLimit(.minutes(3)))
struct AbuseTests {
    static var scale: Int { max(1, Int(ProcessInfo.processInfo.environment["STRATA_ABUSE_SCALE"] ?? "") ?? 1) }

    /// This process's resident memory, in MiB (the test server runs in it).
    static func residentMiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    /// Pings from a well-behaved client while `body` runs; the worst round trip.
    static func pinging(_ server: TestServer, while body: () async throws -> Void) async throws -> Duration {
        let witness = server.client("witness")
        _ = try await witness.ping()
        let worst = NIOLockedValueBoxDuration()
        let pinger = Task {
            while !Task.isCancelled {
                let rtt = try await witness.ping()
                worst.record(rtt)
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        defer { pinger.cancel() }
        try await body()
        pinger.cancel()
        _ = await pinger.result
        // One more after the abuse: the server still answers.
        worst.record(try await witness.ping())
        await witness.close()
        return worst.value
    }

    /// A hello and `count` pipelined fetches of every Book (100 a batch), framed.
    static func helloAndFetches(_ count: Int) throws -> ByteBuffer {
        var bytes = try RawConnection.frameBytes(Strata_V1_ClientFrame.with {
            $0.requestID = 1
            $0.hello = .with { $0.version = WireProtocol.version; $0.clientName = "abuser" }
        })
        for id in 2..<UInt64(count + 2) {
            var frame = try RawConnection.frameBytes(Strata_V1_ClientFrame.with {
                $0.requestID = id
                $0.fetch = .with { $0.entity = "Book"; $0.batchSize = 100 }
            })
            bytes.writeBuffer(&frame)
        }
        return bytes
    }

    /// Inserts `count` books in saves of 500.
    static func seed(_ server: TestServer, books count: Int) async throws {
        let client = server.client("seeder")
        var inserted = 0
        while inserted < count {
            let n = min(500, count - inserted)
            _ = try await client.save(Wire.save(inserts: (0..<n).map { i in
                Wire.insertBook("b\(i)", title: "Seeded \(inserted + i) " + String(repeating: "x", count: 200), pages: Int64(i))
            }))
            inserted += n
        }
        await client.close()
    }

    @Test("A client that pipelines fetches and never reads holds bounded memory; its work stops when it goes")
    func clientThatNeverReads() async throws {
        let server = try await TestServer.start()
        try await Self.seed(server, books: 2000 * Self.scale)
        let before = Self.residentMiB()
        var peak = before
        let abuser = try await RawConnection.connect(port: server.port, autoRead: false)
        let worst = try await Self.pinging(server) {
            // The hello's answer stays unread too; the server goes on.
            abuser.sendWithoutWaiting(try Self.helloAndFetches(400))
            for _ in 0..<30 {
                try await Task.sleep(for: .milliseconds(100))
                peak = max(peak, Self.residentMiB())
            }
        }
        let statsClient = server.client("stats")
        func fetches() async throws -> UInt64 {
            try await statsClient.stats().operations.first { $0.operation == "fetch" }?.requests ?? 0
        }
        let fetchesBefore = try await fetches()
        await abuser.close()
        // The fetches admitted before the close (at most the in-flight
        // limit) wind down; how long that takes depends on the machine's
        // load, so wait until the count holds still for a second.
        let settleDeadline = ContinuousClock.now + .seconds(30)
        var fetchesAfterClose = try await fetches()
        var fetchesLater = fetchesAfterClose
        repeat {
            fetchesAfterClose = fetchesLater
            try await Task.sleep(for: .seconds(1))
            fetchesLater = try await fetches()
        } while fetchesLater != fetchesAfterClose && ContinuousClock.now < settleDeadline
        let limit = UInt64(ServerConfiguration().maxRequestsInFlight)
        print("abuse: client that never reads: RSS \(before) MiB before, peak \(peak) MiB; worst ping \(worst); fetches finished \(fetchesBefore) while connected, \(fetchesLater) once settled (of 400 sent, at most \(limit) in flight)")
        #expect(worst < .seconds(10), "pings were answered within \(worst)")
        #expect(peak - before < 512, "the server grew by \(peak - before) MiB for one client that never reads")
        #expect(fetchesLater == fetchesAfterClose, "fetches of a closed connection went on past 30 s: \(fetchesAfterClose) → \(fetchesLater)")
        // Only what was admitted before the close ran: none of the frames
        // still unread in the socket started after it. (Nothing completes
        // between the stats read and the close: the abuser's socket buffers
        // are full and it reads nothing; one is allowed for the edge.)
        #expect(fetchesLater <= fetchesBefore + limit + 1, "\(fetchesLater) fetches ran, more than the \(limit) in flight at the close (\(fetchesBefore) before it)")
        await statsClient.close()
        try await BadInputTests.expectServing(server)
        try await server.stop()
    }
}


extension AbuseTests {
    @Test("A frame sent a byte at a time is cut off at the frame deadline (slowloris)")
    func slowloris() async throws {
        let server = try await TestServer.start { $0.frameTimeout = .milliseconds(400) }
        let slow = try await RawConnection.connect(port: server.port)
        let hello = try RawConnection.frameBytes(Strata_V1_ClientFrame.with {
            $0.requestID = 1
            $0.hello = .with { $0.version = WireProtocol.version; $0.clientName = "slow" }
        })
        let started = ContinuousClock.now
        var answer: Strata_V1_ServerFrame?
        let worst = try await Self.pinging(server) {
            for byte in hello.readableBytesView {
                guard !slow.inbox.isClosed else { break }
                try? await slow.send(ByteBuffer(bytes: [byte]))
                try await Task.sleep(for: .milliseconds(150))
            }
            answer = try await slow.nextFrame(within: .seconds(5))
        }
        let status = try #require(answer?.status)
        #expect(status.code == .deadlineExceeded, "\(status)")
        #expect(await slow.closedByServer())
        print("abuse: slowloris cut after \(ContinuousClock.now - started); worst ping \(worst)")
        // A frame that arrives whole, however late after the last, is fine.
        let patient = try await RawConnection.connect(port: server.port)
        try await Task.sleep(for: .milliseconds(600))
        #expect(!(try await patient.hello()).hasStatus)
        await patient.close()
        try await server.stop()
    }

    @Test("A save of 50,000 objects in one request, then fetches of every object, streamed in batches")
    func largeSaveAndFetch() async throws {
        let server = try await TestServer.start()
        let client = server.client("large")
        let objects = 50_000
        let saves = Self.scale == 1 ? 1 : 4
        let before = Self.residentMiB()
        var peak = before
        let worst = try await Self.pinging(server) {
            for round in 0..<saves {
                let response = try await client.save(Wire.save(inserts: (0..<objects).map { i in
                    Wire.insertBook("t\(i)", title: "Large \(round)-\(i)", pages: Int64(i))
                }))
                #expect(response.inserted.count == objects)
                peak = max(peak, Self.residentMiB())
            }
            var frames = 0
            var fetched = 0
            var request = Wire.fetch("Book")
            request.batchSize = 1000
            for try await batch in try await client.fetchBatches(request) {
                frames += 1
                fetched += batch.objects.count
                peak = max(peak, Self.residentMiB())
            }
            #expect(fetched == objects * saves)
            #expect(frames == objects * saves / 1000)
        }
        print("abuse: save of \(objects) objects ×\(saves), fetch of \(objects * saves): RSS \(before) → peak \(peak) MiB; worst ping \(worst)")
        #expect(worst < .seconds(20))
        await client.close()
        try await server.stop()
    }

    @Test("A predicate of 1 MiB runs; one nested 10,000 deep gets a clean error")
    func hugeAndDeepPredicates() async throws {
        let server = try await TestServer.start()
        let client = server.client("predicates")
        let worst = try await Self.pinging(server) {
            // 1 MiB of OR-ed comparisons (about 60,000 terms): runs.
            _ = try await client.save(Wire.save(inserts: [Wire.insertBook("a", title: "x", pages: 7), Wire.insertBook("b", title: "y", pages: 40_000)]))
            var long = "title == 'x'"
            var i = 0
            while long.utf8.count < 1 << 20 { long += " OR pages == \(i)"; i += 1 }
            let started = ContinuousClock.now
            #expect(try await client.fetch(Wire.fetch("Book", long, resultType: .count)).count == 2)
            print("abuse: a 1 MiB predicate of \(i + 1) terms answered in \(ContinuousClock.now - started)")
            let deep = String(repeating: "(", count: 10_000) + "pages > 1" + String(repeating: ")", count: 10_000)
            let deepError = try await ProtocolExactnessTests.refusal { _ = try await client.fetch(Wire.fetch("Book", deep)) }
            #expect(deepError.code == .invalidArgument)
            #expect(deepError.message.contains("nesting"), "\(deepError.message.prefix(300))")
            let nots = String(repeating: "NOT ", count: 10_000) + "pages > 1"
            let notError = try await ProtocolExactnessTests.refusal { _ = try await client.fetch(Wire.fetch("Book", nots)) }
            #expect(notError.code == .invalidArgument)
        }
        print("abuse: 10,000-deep predicates refused; worst ping \(worst)")
        try await BadInputTests.expectServing(server)
        await client.close()
        try await server.stop()
    }
}

extension AbuseTests {
    @Test("Shutdown is bounded by its grace period even with a client that never reads")
    func shutdownIsBounded() async throws {
        let server = try await TestServer.start { $0.shutdownGracePeriod = .seconds(1) }
        try await Self.seed(server, books: 2000)
        let abuser = try await RawConnection.connect(port: server.port, autoRead: false)
        abuser.sendWithoutWaiting(try Self.helloAndFetches(200))
        try await Task.sleep(for: .seconds(1))
        let started = ContinuousClock.now
        try await server.stop()
        let took = ContinuousClock.now - started
        print("abuse: shutdown with a client that never reads took \(took) (grace period 1 s)")
        #expect(took < .seconds(15), "shutdown took \(took)")
        await abuser.close()
    }
}

/// The largest duration recorded, from any task.
final class NIOLockedValueBoxDuration: Sendable {
    private let box = NIOLockedValueBox<Duration>(.zero)
    func record(_ duration: Duration) { box.withLockedValue { $0 = max($0, duration) } }
    var value: Duration { box.withLockedValue { $0 } }
}
