import Foundation
import NIOConcurrencyHelpers
import StrataWire
import Testing
@testable import StrataClient

/// The client's backpressure on streamed answers: reading stops while
/// streams hold too many frames, resumes when they are taken, and frames
/// a consumer abandoned stop counting.
@Suite(.timeLimit(.minutes(1))) struct ReadThrottleTests {
    @Test func readingStopsAtTheHighMarkAndResumesAtTheLow() {
        let throttle = ReadThrottle()
        let calls = NIOLockedValueBox<[Bool]>([])
        throttle.attach { throttle in calls.withLockedValue { $0.append(throttle.isReading) } }
        for _ in 0..<(ReadThrottle.pauseAt - 1) { throttle.yielded(1) }
        #expect(calls.withLockedValue { $0 }.isEmpty)
        throttle.yielded(2)
        #expect(calls.withLockedValue { $0 } == [false])
        // More frames while paused (already in the socket's read) change nothing.
        throttle.yielded(2)
        for _ in 0..<(ReadThrottle.pauseAt - ReadThrottle.resumeAt) { throttle.consumed(1) }
        #expect(calls.withLockedValue { $0 } == [false])
        throttle.consumed(1)
        #expect(calls.withLockedValue { $0 } == [false, true])
        #expect(throttle.waiting == ReadThrottle.resumeAt)
        // A consumer that stops iterating releases what it left.
        throttle.dropped(1)
        throttle.dropped(2)
        #expect(throttle.waiting == 0)
    }

    @Test func finishedStreamsCountUntilTakenAndDroppedOnesNeverGoNegative() {
        let throttle = ReadThrottle()
        for _ in 0..<3 { throttle.yielded(5) }
        // The stream finished; its consumer still takes all three.
        for _ in 0..<3 { throttle.consumed(5) }
        #expect(throttle.waiting == 0)
        throttle.dropped(5)
        #expect(throttle.waiting == 0)
        // Dropped with frames left: they stop counting, later takes count for nothing.
        throttle.yielded(6)
        throttle.yielded(6)
        throttle.dropped(6)
        throttle.consumed(6)
        #expect(throttle.waiting == 0)
        throttle.yielded(7)
        #expect(throttle.waiting == 1)
    }

    @Test func serverURLs() {
        #expect(ServerURL("tcp://db.example.com:7420") == ServerURL("tcp://db.example.com:7420"))
        #expect(ServerURL("tcp://db.example.com:7420")?.host == "db.example.com")
        #expect(ServerURL("tcp://db.example.com:7420")?.port == 7420)
        #expect(ServerURL("tls://db.example.com")?.usesTLS == true)
        #expect(ServerURL("tls://db.example.com")?.port == nil)
        #expect(ServerURL("tcp://[::1]:7420")?.host == "::1")
        for bad in ["http://x:1", "strata://x/Book/p1", "tcp://", "tcp://x:70000", "tcp://x/path", "x:7420", "tcp://u@x:1"] {
            #expect(ServerURL(bad) == nil, "\(bad)")
        }
    }

    @Test func aSlowConsumerOfALongFetchGetsEveryBatch() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        for batch in 0..<4 {
            _ = try await client.save(Wire.save(inserts: (0..<500).map { Wire.insertBook("b\(batch)-\($0)", title: "Book \(batch)-\($0)") }))
        }
        var request = Wire.fetch("Book", sort: ["title"])
        request.batchSize = 5
        var received = 0, frames = 0
        for try await batch in try await client.fetchBatches(request) {
            received += batch.objects.count
            frames += 1
            // Slower than the server: the connection pauses and resumes reading.
            if frames % 20 == 0 { try await Task.sleep(for: .milliseconds(20)) }
            if frames == 100 {
                // Let the stream fill up and reading stop, then ask something
                // else on the same connection: its answer must be read.
                try await Task.sleep(for: .milliseconds(300))
                let counted = try await withThrowingTaskGroup(of: Int?.self) { group in
                    group.addTask { try await client.count("Book") }
                    group.addTask { try await Task.sleep(for: .seconds(10)); return nil }
                    defer { group.cancelAll() }
                    return try await group.next() ?? nil
                }
                #expect(counted == 2000, "a request sent while the stream was paused was never answered")
            }
        }
        #expect(received == 2000)
        #expect(frames == 400)
        // The connection still answers afterwards.
        #expect(try await client.count("Book") == 2000)
        // Abandoning a stream midway releases its frames: later fetches flow.
        var taken = 0
        for try await _ in try await client.fetchBatches(request) {
            taken += 1
            if taken == 3 { break }
        }
        #expect(try await client.fetch(request).objects.count == 2000)
        await client.close()
        try await server.stop()
    }
}
