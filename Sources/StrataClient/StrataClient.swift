import Foundation
import Logging
import NIOConcurrencyHelpers
import StrataModel
import StrataWire
import Synchronization

/// A client of `strata-server`: one connection carrying many requests at
/// once (each `await`ing its own answer, in any order), subscriptions as
/// async sequences, and a fresh connection (with subscriptions renewed)
/// when the old one is lost, for example after the server restarts.
///
/// Cancelling a task that awaits a request stops the wait with
/// `CancellationError`; a request already sent is not withdrawn, so a save
/// may still commit (refresh or fetch to learn its outcome).
public actor StrataClient {
    /// Where and how the client connects.
    public nonisolated let configuration: ClientConfiguration
    /// The server's hello, once connected.
    public private(set) var serverInfo: Strata_V1_HelloResponse?

    private var connection: ClientConnection? {
        didSet { openConnection.withLockedValue { $0 = connection } }
    }
    /// The open connection, readable without a hop onto the actor (the
    /// fast path of every request).
    private nonisolated let openConnection = NIOLockedValueBox<ClientConnection?>(nil)
    private var connecting: Task<ClientConnection, any Error>?
    private nonisolated let requestIDs = Atomic<UInt64>(0)
    private var subscriptions: [UInt64: LocalSubscription] = [:]
    private var nextLocalSubscriptionID: UInt64 = 0
    /// Renews, after a pause, the subscriptions a new connection's server
    /// did not take (nil when none waits).
    private var renewalTask: Task<Void, Never>?
    private var closed = false
    private let logger: Logger

    private struct LocalSubscription {
        var request: Strata_V1_SubscribeRequest
        var continuation: AsyncStream<Strata_V1_ChangeNotification>.Continuation
        /// The id the server of ``connection`` gave it (nil until it answers).
        var serverID: UInt64?
        /// The connection it is subscribed on, or being subscribed on.
        var connection: ObjectIdentifier?
    }

    /// Creates a client; it connects on first use (or with ``connect()``).
    public init(configuration: ClientConfiguration = ClientConfiguration(), logger: Logger = Logger(label: "strata.client")) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Connects and exchanges hellos now (otherwise the first request does).
    @discardableResult
    public func connect() async throws -> Strata_V1_HelloResponse {
        _ = try await liveConnection()
        guard let serverInfo else { throw StrataClientError(.unavailable, "not connected") }
        return serverInfo
    }

    /// Closes the connection and ends every subscription.
    public func close() {
        closed = true
        renewalTask?.cancel()
        connection?.close()
        connection = nil
        for subscription in subscriptions.values { subscription.continuation.finish() }
        subscriptions.removeAll()
    }

    // MARK: Operations

    /// Round-trip time of a ping.
    public nonisolated func ping() async throws -> Duration {
        let started = ContinuousClock.now
        _ = try await call(.ping(Strata_V1_PingRequest()))
        return .now - started
    }

    /// The served model.
    public nonisolated func model() async throws -> Strata_V1_GetModelResponse {
        let frame = try await call(.getModel(Strata_V1_GetModelRequest()))
        guard case .model(let model)? = frame.response else { throw unexpected(frame, "model") }
        return model
    }

    /// The server's figures.
    public nonisolated func stats() async throws -> Strata_V1_StatsResponse {
        let frame = try await call(.stats(Strata_V1_StatsRequest()))
        guard case .stats(let stats)? = frame.response else { throw unexpected(frame, "stats") }
        return stats
    }

    /// Persistent history of one store (by configuration or identifier;
    /// empty for the server's only store): the transactions after
    /// `afterToken` (nil: from the oldest kept), at most `limit` (0: the
    /// server's default). With `consumer`, the server first records that
    /// this consumer has merged everything up to `afterToken`. An expired
    /// token fails with Strata code 134301.
    public nonisolated func history(store: String = "", afterToken: UInt64? = nil, limit: UInt32 = 0, consumer: String = "") async throws -> Strata_V1_HistoryResponse {
        let frame = try await call(.history(Strata_V1_HistoryRequest.with {
            $0.store = store
            if let afterToken { $0.afterToken = afterToken }
            $0.limit = limit
            $0.consumer = consumer
        }))
        guard case .history(let history)? = frame.response else { throw unexpected(frame, "history") }
        return history
    }

    /// Runs a fetch and gathers every batch; a cancelled task gets
    /// `CancellationError`, never the batches that arrived before it.
    public nonisolated func fetch(_ request: Strata_V1_FetchRequest) async throws -> FetchResult {
        var result = FetchResult()
        for try await batch in try await fetchBatches(request) {
            result.objects += batch.objects
            result.objectIDs += batch.objectIds
            result.count = Int(batch.count)
        }
        // Cancellation ends the batch stream quietly: not a complete result.
        try Task.checkCancellation()
        return result
    }

    /// Runs a fetch and yields its batches as they arrive (a cancelled
    /// task's iteration ends early, without an error). A consumer slower
    /// than the network holds the server back: the connection stops
    /// reading while 32 frames wait unconsumed (``ReadThrottle``), which
    /// also delays the connection's other answers and notifications.
    public nonisolated func fetchBatches(_ request: Strata_V1_FetchRequest) async throws -> some AsyncSequence<Strata_V1_FetchBatch, any Error> {
        let responses = try await send(.fetch(request))
        return responses.map { frame in
            guard case .fetch(let batch)? = frame.response else {
                throw StrataClientError(.internal, "expected a fetch batch, the server sent \(String(describing: frame.response))")
            }
            return batch
        }
    }

    /// Counts the objects a predicate selects.
    public nonisolated func count(_ entity: String, predicate: String = "") async throws -> Int {
        let result = try await fetch(Strata_V1_FetchRequest.with {
            $0.entity = entity
            $0.predicate = predicate
            $0.resultType = .count
        })
        return result.count
    }

    /// Saves one change set, all or nothing.
    public nonisolated func save(_ request: Strata_V1_SaveRequest) async throws -> Strata_V1_SaveResponse {
        let frame = try await call(.save(request))
        guard case .save(let response)? = frame.response else { throw unexpected(frame, "save") }
        return response
    }

    /// Current state (and fetched properties) of objects.
    public nonisolated func refresh(_ ids: [String], includeFetched: [String] = [], includeRelationships: [String] = [], skipFetched: Bool = false) async throws -> Strata_V1_RefreshResponse {
        let frame = try await call(.refresh(Strata_V1_RefreshRequest.with {
            $0.ids = ids
            $0.includeFetched = includeFetched
            $0.includeRelationships = includeRelationships
            $0.skipFetched = skipFetched
        }))
        guard case .refresh(let response)? = frame.response else { throw unexpected(frame, "refresh") }
        return response
    }

    /// Subscribes to committed changes of an entity (every entity when
    /// empty), optionally filtered by a predicate. The sequence ends when
    /// the client closes; iterating it no more unsubscribes. After a lost
    /// connection the subscription is renewed on the new one (changes
    /// committed while disconnected are not replayed). A renewal the new
    /// server refuses for a passing reason (it is overloaded, the request
    /// timed out) is tried again with backoff; one it refuses for good (the
    /// entity or predicate does not fit the model it now serves) ends the
    /// sequence, and is logged as an error.
    public func subscribe(entity: String = "", predicate: String = "", variables: [String: Strata_V1_VariableValue] = [:]) async throws -> AsyncStream<Strata_V1_ChangeNotification> {
        let request = Strata_V1_SubscribeRequest.with {
            $0.entity = entity
            $0.predicate = predicate
            $0.variables = variables
        }
        let (stream, continuation) = AsyncStream<Strata_V1_ChangeNotification>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        nextLocalSubscriptionID += 1
        let localID = nextLocalSubscriptionID
        let connection = try await liveConnection()
        let serverID = try await subscribe(request, localID: localID, continuation: continuation, on: connection)
        subscriptions[localID] = LocalSubscription(request: request, continuation: continuation, serverID: serverID, connection: ObjectIdentifier(connection))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(localID: localID) }
        }
        // A new connection opened while the server answered renewed the
        // subscriptions known then, not this one; a connection that failed
        // meanwhile found none to renew.
        if self.connection !== connection || !connection.isOpen { scheduleRenewal() }
        return stream
    }

    // MARK: Plumbing

    private func subscribe(_ request: Strata_V1_SubscribeRequest, localID: UInt64, continuation: AsyncStream<Strata_V1_ChangeNotification>.Continuation, on connection: ClientConnection) async throws -> UInt64 {
        // Routed as the answer arrives: a notification right behind it is not lost.
        let frame = try await connection.call(makeFrame(.subscribe(request)), notifications: { continuation.yield($0) })
        guard case .subscribe(let response)? = frame.response else { throw unexpected(frame, "subscribe") }
        return response.subscriptionID
    }

    private func unsubscribe(localID: UInt64) async {
        guard let subscription = subscriptions.removeValue(forKey: localID) else { return }
        guard let serverID = subscription.serverID, let connection, connection.isOpen,
              subscription.connection == ObjectIdentifier(connection) else { return }
        connection.unroute(subscription: serverID)
        _ = try? await connection.call(makeFrame(.unsubscribe(Strata_V1_UnsubscribeRequest.with { $0.subscriptionID = serverID })))
    }

    private nonisolated func makeFrame(_ request: Strata_V1_ClientFrame.OneOf_Request) -> Strata_V1_ClientFrame {
        var id = requestIDs.add(1, ordering: .relaxed).newValue
        if id == 0 { id = requestIDs.add(1, ordering: .relaxed).newValue }
        var frame = Strata_V1_ClientFrame()
        frame.requestID = id
        frame.request = request
        return frame
    }

    nonisolated func send(_ request: Strata_V1_ClientFrame.OneOf_Request) async throws -> ClientConnection.Responses {
        let connection = try await currentConnection()
        return try await connection.send(makeFrame(request))
    }

    /// The open connection without touching the actor, else through it.
    private nonisolated func currentConnection() async throws -> ClientConnection {
        if let open = openConnection.withLockedValue({ $0 }), open.isOpen { return open }
        return try await liveConnection()
    }

    private nonisolated func call(_ request: Strata_V1_ClientFrame.OneOf_Request) async throws -> Strata_V1_ServerFrame {
        let connection = try await currentConnection()
        return try await connection.call(makeFrame(request))
    }

    /// The open connection, connecting (and saying hello, and renewing
    /// subscriptions) when there is none.
    private func liveConnection() async throws -> ClientConnection {
        if closed { throw StrataClientError(.unavailable, "the client is closed") }
        if let connection, connection.isOpen { return connection }
        if let connecting { return try await connecting.value }
        let task = Task { try await self.openConnection() }
        connecting = task
        defer { connecting = nil }
        let connection = try await task.value
        // Closed while connecting: the new connection is not kept.
        if closed {
            connection.close()
            throw StrataClientError(.unavailable, "the client is closed")
        }
        self.connection = connection
        return connection
    }

    private func openConnection() async throws -> ClientConnection {
        let connection = try await ClientConnection.connect(configuration)
        let hello = Strata_V1_HelloRequest.with {
            $0.version = WireProtocol.version
            $0.clientName = configuration.clientName
            $0.authToken = configuration.authToken ?? ""
            $0.acceptCompression = configuration.acceptCompression
        }
        let frame: Strata_V1_ServerFrame
        do {
            frame = try await connection.call(makeFrame(.hello(hello)))
        } catch {
            connection.close()
            throw error
        }
        guard case .hello(let info)? = frame.response else {
            connection.close()
            throw unexpected(frame, "hello")
        }
        serverInfo = info
        if !(await renewSubscriptions(on: connection)) { scheduleRenewal() }
        connection.onFailure { [weak self] _ in
            Task { await self?.connectionFailed() }
        }
        return connection
    }

    /// Subscribes again, on `connection`, every subscription not subscribed
    /// (or being subscribed) there; true when, at the end, every one is.
    ///
    /// A subscription the server refuses for good is ended (its sequence
    /// finishes); one refused for a passing reason, or lost with the
    /// connection, is left for the next attempt.
    private func renewSubscriptions(on connection: ClientConnection) async -> Bool {
        let target = ObjectIdentifier(connection)
        for localID in subscriptions.keys.sorted() {
            // A connection that failed, or was replaced, renews nothing more:
            // the one that replaced it renews what is left.
            guard connection.isOpen, self.connection.map({ $0 === connection || !$0.isOpen }) ?? true else { break }
            guard let subscription = subscriptions[localID], subscription.connection != target else { continue }
            subscriptions[localID]?.connection = target
            subscriptions[localID]?.serverID = nil
            do {
                let serverID = try await subscribe(subscription.request, localID: localID, continuation: subscription.continuation, on: connection)
                if subscriptions[localID]?.connection == target {
                    subscriptions[localID]?.serverID = serverID
                } else if subscriptions[localID] == nil {
                    // Ended while the server answered: withdrawn there too.
                    connection.unroute(subscription: serverID)
                    _ = try? await connection.call(makeFrame(.unsubscribe(Strata_V1_UnsubscribeRequest.with { $0.subscriptionID = serverID })))
                }
            } catch {
                guard subscriptions[localID]?.connection == target else { continue }
                if Self.refusesForGood(error) {
                    logger.error("subscription ended: the server refused to renew it", metadata: [
                        "entity": "\(subscription.request.entity)", "predicate": "\(subscription.request.predicate)", "error": "\(error)",
                    ])
                    subscriptions.removeValue(forKey: localID)?.continuation.finish()
                } else {
                    logger.warning("could not renew subscription; trying again", metadata: ["entity": "\(subscription.request.entity)", "error": "\(error)"])
                    subscriptions[localID]?.connection = nil
                }
            }
        }
        return subscriptions.values.allSatisfy { $0.connection == target }
    }

    /// Starts renewing, with backoff, the subscriptions no connection
    /// took, unless that is already under way.
    private func scheduleRenewal() {
        guard renewalTask == nil, !closed else { return }
        renewalTask = Task { await self.renewWithBackoff() }
    }

    private func renewWithBackoff() async {
        defer { renewalTask = nil }
        var delay = Duration.milliseconds(100)
        while !closed, !subscriptions.isEmpty {
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
            guard !closed, let connection = try? await liveConnection() else { continue }
            if await renewSubscriptions(on: connection) { return }
        }
    }

    /// Whether a subscribe refusal will not change by asking again: the
    /// request does not fit what the server serves.
    private static func refusesForGood(_ error: any Error) -> Bool {
        guard let error = error as? StrataClientError, !error.isConnectionError else { return false }
        switch error.code {
        case .invalidArgument, .notFound, .failedPrecondition, .outOfRange, .unimplemented, .permissionDenied, .unauthenticated:
            return true
        default:
            return false
        }
    }

    /// Renews subscriptions on a new connection when the old one fails,
    /// retrying with backoff while there are subscriptions to renew.
    private func connectionFailed() async {
        var delay = Duration.milliseconds(100)
        while !closed, !subscriptions.isEmpty, connection?.isOpen != true {
            do {
                _ = try await liveConnection()
                return
            } catch {
                try? await Task.sleep(for: Self.jittered(delay))
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// `delay` spread over its upper half at random ("equal jitter"), so
    /// that clients that lost one server do not all retry in step.
    static func jittered(_ delay: Duration) -> Duration {
        delay / 2 + delay / 2 * Double.random(in: 0...1)
    }

    nonisolated func unexpected(_ frame: Strata_V1_ServerFrame, _ expected: String) -> StrataClientError {
        StrataClientError(.internal, "expected a \(expected) response, the server sent \(String(describing: frame.response))")
    }
}
