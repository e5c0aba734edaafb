import Foundation
import NIOConcurrencyHelpers
import StrataClient
import StrataWire
import Testing

/// What a client does with its subscriptions when the server of a new
/// connection refuses to renew them (scripted: a real server refuses only
/// requests that do not fit its model).
@Suite("Subscription renewal", .timeLimit(.minutes(1)))
struct SubscriptionRenewalTests {
    /// How waiting on a subscription's sequence ended.
    enum Outcome: Sendable, Equatable {
        case notification(Strata_V1_ChangeNotification)
        case finished
        case timedOut
    }

    /// The first thing the sequence does within `timeout`.
    private func outcome(_ stream: AsyncStream<Strata_V1_ChangeNotification>, within timeout: Duration = .seconds(10)) async -> Outcome {
        await withTaskGroup(of: Outcome.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                return await iterator.next().map(Outcome.notification) ?? .finished
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .timedOut
            }
            let first = await group.next() ?? .timedOut
            group.cancelAll()
            return first
        }
    }

    /// A server whose first connection takes the subscription and then
    /// drops; on the second, the renewal is answered by `renewal` (called
    /// with the attempt's number, from 0).
    private func server(renewal: @escaping @Sendable (Int, Strata_V1_ClientFrame) -> ScriptedServer.Reply) async throws -> (ScriptedServer, NIOLockedValueBox<Int>) {
        let attempts = NIOLockedValueBox(0)
        let server = try await ScriptedServer.start { connection, request in
            switch request.request {
            case .hello?:
                return .init(frames: [ScriptedServer.hello(request)])
            case .subscribe? where connection == 0:
                return .init(frames: [ScriptedServer.subscribed(request, id: 1)], thenClose: true)
            case .subscribe?:
                let attempt = attempts.withLockedValue { count in
                    defer { count += 1 }
                    return count
                }
                return renewal(attempt, request)
            default:
                return .init(frames: [ScriptedServer.refused(request, .unimplemented, "not scripted")])
            }
        }
        return (server, attempts)
    }

    private func client(_ server: ScriptedServer) -> StrataClient {
        StrataClient(configuration: ClientConfiguration(host: "127.0.0.1", port: server.port, clientName: "renewal-test", connectTimeout: .seconds(5)))
    }

    @Test("A renewal refused for a passing reason is tried again, and the subscription goes on")
    func passingRefusalIsRetried() async throws {
        let (server, attempts) = try await server { attempt, request in
            if attempt == 0 {
                return .init(frames: [ScriptedServer.refused(request, .resourceExhausted, "too many requests in flight")])
            }
            return .init(frames: [
                ScriptedServer.subscribed(request, id: 2),
                ScriptedServer.notification(subscription: 2, origin: "after the retry"),
            ])
        }
        let client = client(server)
        let notifications = try await client.subscribe(entity: "Book")
        let outcome = await outcome(notifications)
        guard case .notification(let notification) = outcome else {
            Issue.record("expected a notification after the retried renewal, got \(outcome)")
            await client.close()
            await server.stop()
            return
        }
        #expect(notification.origin == "after the retry")
        #expect(attempts.withLockedValue { $0 } == 2)
        await client.close()
        await server.stop()
    }

    @Test("A renewal refused for good ends the subscription's sequence instead of leaving it silent")
    func refusalForGoodEndsTheSequence() async throws {
        let (server, attempts) = try await server { _, request in
            .init(frames: [ScriptedServer.refused(request, .invalidArgument, "subscribe: unknown entity 'Book'")])
        }
        let client = client(server)
        let notifications = try await client.subscribe(entity: "Book")
        #expect(await outcome(notifications) == .finished)
        // Asked once: a refusal for good is not asked again.
        try await Task.sleep(for: .milliseconds(300))
        #expect(attempts.withLockedValue { $0 } == 1)
        await client.close()
        await server.stop()
    }
}
