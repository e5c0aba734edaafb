import NIOConcurrencyHelpers
import StrataWire

/// Where one connection's answers go: the requests waiting for them (by
/// request id), the subscriptions' handlers, and the connection's failure.
/// Fed on the event loop by ``ResponseHandler``; requests register from
/// any task. Whoever removes a waiter from the table resumes it, exactly
/// once.
final class ClientRouter: Sendable {
    typealias Responses = AsyncThrowingStream<Strata_V1_ServerFrame, any Error>

    /// A request waiting for its answer.
    enum Waiter: Sendable {
        /// One answer frame.
        case single(CheckedContinuation<Strata_V1_ServerFrame, any Error>)
        /// Frames until the last (fetch batches).
        case stream(Responses.Continuation)
        /// A subscribe's one answer; its notifications go to the handler
        /// from that answer on (the route is installed as the answer is
        /// taken, so no notification that follows it finds no route).
        case subscribe(CheckedContinuation<Strata_V1_ServerFrame, any Error>, @Sendable (Strata_V1_ChangeNotification) -> Void)

        /// Ends the wait with `error`.
        func fail(_ error: any Error) {
            switch self {
            case .single(let continuation), .subscribe(let continuation, _): continuation.resume(throwing: error)
            case .stream(let continuation): continuation.finish(throwing: error)
            }
        }
    }

    private struct State {
        var pending: [UInt64: Waiter] = [:]
        var routes: [UInt64: @Sendable (Strata_V1_ChangeNotification) -> Void] = [:]
        /// Set once the connection has failed or closed.
        var failure: StrataClientError?
        /// Told once when the connection fails.
        var onFailure: (@Sendable (StrataClientError) -> Void)?
    }

    private let state = NIOLockedValueBox(State())
    /// Stops the connection's reads while streams hold too many frames.
    let throttle = ReadThrottle()

    init() {
        throttle.attach(starving: { [weak self] buffered in self?.hasStarvingWaiter(buffered: buffered) ?? false })
    }

    /// Whether the connection has not failed.
    var isOpen: Bool { state.withLockedValue { $0.failure == nil } }

    /// Registers a waiter for request `id`, or answers the connection's
    /// failure when it has already failed.
    func register(_ waiter: Waiter, for id: UInt64) -> StrataClientError? {
        let failure: StrataClientError? = state.withLockedValue { state in
            if let failure = state.failure { return failure }
            state.pending[id] = waiter
            return nil
        }
        // A paused connection reads again for a request that may be awaited.
        if failure == nil { throttle.requestRegistered() }
        return failure
    }

    /// Whether a request waits with no frame buffered for it (`buffered`:
    /// frames waiting in streams, by request): its answer must be read.
    func hasStarvingWaiter(buffered: [UInt64: Int]) -> Bool {
        state.withLockedValue { state in
            state.pending.contains { id, waiter in
                if case .stream = waiter { return (buffered[id] ?? 0) == 0 }
                return true
            }
        }
    }

    /// Whether a request `id` waits for its answer.
    func isWaiting(for id: UInt64) -> Bool {
        state.withLockedValue { $0.pending[id] != nil }
    }

    /// Removes and returns the waiter of request `id` (nil when it has
    /// already been answered, failed or removed).
    func remove(_ id: UInt64) -> Waiter? {
        state.withLockedValue { $0.pending.removeValue(forKey: id) }
    }

    /// Stops routing a subscription's notifications.
    func unroute(subscription id: UInt64) {
        state.withLockedValue { _ = $0.routes.removeValue(forKey: id) }
    }

    /// Calls `handler` once when the connection fails or closes (at once
    /// when it already has).
    func onFailure(_ handler: @escaping @Sendable (StrataClientError) -> Void) {
        let failure: StrataClientError? = state.withLockedValue { state in
            if let failure = state.failure { return failure }
            state.onFailure = handler
            return nil
        }
        if let failure { handler(failure) }
    }

    /// Hands one server frame to whoever waits for it. Answers a frame that
    /// ends the connection (a connection-level error) with true.
    func deliver(_ message: Strata_V1_ServerFrame) -> Bool {
        if message.requestID == 0 {
            if case .notification(let notification)? = message.response {
                let handler = state.withLockedValue { $0.routes[notification.subscriptionID] }
                handler?(notification)
            } else if message.hasStatus {
                // A connection-level error; the server closes next.
                fail(StrataClientError(status: message.status))
                return true
            }
            return false
        }
        let failed = message.hasStatus && message.status.code != .ok
        let last = !message.moreFollows || failed
        let waiter = state.withLockedValue { state -> Waiter? in
            switch state.pending[message.requestID] {
            case .single?:
                // A single answer takes the first frame.
                return state.pending.removeValue(forKey: message.requestID)
            case .subscribe(_, let handler)?:
                if !failed, case .subscribe(let response)? = message.response {
                    state.routes[response.subscriptionID] = handler
                }
                return state.pending.removeValue(forKey: message.requestID)
            case .stream?:
                return last ? state.pending.removeValue(forKey: message.requestID) : state.pending[message.requestID]
            case nil:
                return nil
            }
        }
        switch waiter {
        case .single(let continuation)?, .subscribe(let continuation, _)?:
            if failed {
                continuation.resume(throwing: StrataClientError(status: message.status))
            } else {
                continuation.resume(returning: message)
            }
        case .stream(let continuation)?:
            if failed {
                continuation.finish(throwing: StrataClientError(status: message.status))
            } else {
                throttle.yielded(message.requestID)
                continuation.yield(message)
                if last { continuation.finish() }
            }
        case nil:
            break
        }
        return false
    }

    /// Fails every waiting request and every later one with `error` (the
    /// first failure is kept).
    func fail(_ error: StrataClientError) {
        let (pending, failure, handler): ([Waiter], StrataClientError, (@Sendable (StrataClientError) -> Void)?) = state.withLockedValue { state in
            var handler: (@Sendable (StrataClientError) -> Void)?
            if state.failure == nil {
                state.failure = error
                handler = state.onFailure
                state.onFailure = nil
            }
            defer { state.pending.removeAll() }
            return (Array(state.pending.values), state.failure ?? error, handler)
        }
        for waiter in pending { waiter.fail(failure) }
        handler?(failure)
    }
}
