import Foundation
import NIOConcurrencyHelpers
import StrataWire
import Testing
@testable import StrataClient

/// The client's routing of answers and notifications, without a socket.
@Suite struct ClientRouterTests {
    private func notification(_ subscription: UInt64, _ sequence: UInt64) -> Strata_V1_ServerFrame {
        Strata_V1_ServerFrame.with {
            $0.notification = Strata_V1_ChangeNotification.with {
                $0.subscriptionID = subscription
                $0.origin = "save \(sequence)"
            }
        }
    }

    @Test func aNotificationRightBehindTheSubscribeAnswerReachesTheSubscription() async throws {
        let router = ClientRouter()
        let received = NIOLockedValueBox<[String]>([])
        async let answer: Strata_V1_ServerFrame = withCheckedThrowingContinuation { continuation in
            _ = router.register(.subscribe(continuation, { note in received.withLockedValue { $0.append(note.origin) } }), for: 7)
        }
        while !router.isWaiting(for: 7) { await Task.yield() }
        // The event loop hands over the answer and, before the subscriber's
        // task has run, the next frame: a notification for it.
        #expect(!router.deliver(Strata_V1_ServerFrame.with {
            $0.requestID = 7
            $0.subscribe = Strata_V1_SubscribeResponse.with { $0.subscriptionID = 42 }
        }))
        #expect(!router.deliver(notification(42, 1)))
        #expect(received.withLockedValue { $0 } == ["save 1"], "the notification right behind the answer was lost")
        let frame = try await answer
        #expect(frame.requestID == 7)
        #expect(!router.deliver(notification(42, 2)))
        router.unroute(subscription: 42)
        #expect(!router.deliver(notification(42, 3)))
        #expect(received.withLockedValue { $0 } == ["save 1", "save 2"])
    }

    @Test func everyWaiterIsFailedOnceWhenTheConnectionFails() async {
        let router = ClientRouter()
        let single = Task {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Strata_V1_ServerFrame, any Error>) in
                _ = router.register(.single(continuation), for: 1)
            }
        }
        let (stream, continuation) = ClientRouter.Responses.makeStream()
        _ = router.register(.stream(continuation), for: 2)
        while !router.isWaiting(for: 1) { await Task.yield() }
        router.fail(StrataClientError(.unavailable, "gone"))
        router.fail(StrataClientError(.unavailable, "gone again"))
        await #expect(throws: StrataClientError.self) { _ = try await single.value }
        await #expect(throws: StrataClientError.self) { for try await _ in stream {} }
        // Later requests are refused with the first failure.
        let (_, late) = ClientRouter.Responses.makeStream()
        #expect(router.register(.stream(late), for: 3)?.message.contains("gone") == true)
        // An answer for a request nobody waits for is ignored.
        #expect(!router.deliver(Strata_V1_ServerFrame.with { $0.requestID = 1; $0.ping = Strata_V1_PingResponse() }))
    }

    @Test func aCancelledFetchThrowsInsteadOfReturningPartialResults() async throws {
        let server = try await TestServer.start()
        let client = server.client("cancelled")
        for i in 0..<3 {
            _ = try await client.save(Wire.save(inserts: [Wire.insertBook("b\(i)", title: "Book \(i)")]))
        }
        #expect(try await client.count("Book") == 3)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.count("Book")
        }
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
        #expect(try await client.count("Book") == 3, "the connection still serves after a cancelled request")
        await client.close()
        try await server.stop()
    }
}

@Suite("Reconnect backoff")
struct ReconnectBackoffTests {
    @Test("Retries are spread over the upper half of each delay, not in step")
    func jitter() {
        let delays = (0..<200).map { _ in StrataClient.jittered(.seconds(1)) }
        #expect(delays.allSatisfy { $0 >= .milliseconds(500) && $0 <= .seconds(1) })
        #expect(Set(delays).count > 150)
    }
}
