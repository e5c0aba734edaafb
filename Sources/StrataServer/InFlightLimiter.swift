import NIOConcurrencyHelpers

/// A counting semaphore for requests in flight on one connection: the
/// reader acquires a slot before starting a request and waits when none
/// is free, so a client that pipelines without bound stops being read.
final class InFlightLimiter: Sendable {
    private struct State {
        var available: Int
        var running = 0
        /// No slot is handed out without waiting any more (the connection drains).
        var draining = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: NIOLockedValueBox<State>
    /// Touched when the last running request ends, so that a connection's
    /// idle time counts from its last answer, not from the frame that asked
    /// for it (a save slower than the idle timeout must not leave its client
    /// closed the moment it is answered).
    private let activity: ActivityClock?

    init(limit: Int, activity: ActivityClock? = nil) {
        state = NIOLockedValueBox(State(available: max(1, limit)))
        self.activity = activity
    }

    /// Requests running now.
    var running: Int { state.withLockedValue { $0.running } }

    /// Readers waiting for a slot (for tests that must know one waits).
    var waitingCount: Int { state.withLockedValue { $0.waiters.count } }

    /// Takes a slot, waiting for one when all are taken.
    func acquire() async {
        let acquired = state.withLockedValue { state -> Bool in
            guard state.available > 0 else { return false }
            state.available -= 1
            state.running += 1
            return true
        }
        if acquired { return }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLockedValue { state -> Bool in
                if state.available > 0 {
                    state.available -= 1
                    state.running += 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Takes a slot when one is free, without waiting; false when all are
    /// taken (the request then goes the waiting way).
    func tryAcquire() -> Bool {
        state.withLockedValue { state in
            guard !state.draining, state.available > 0, state.waiters.isEmpty else { return false }
            state.available -= 1
            state.running += 1
            return true
        }
    }

    /// From now on ``tryAcquire()`` refuses: called before waiting until
    /// idle, so that no request starts (from the event loop) once the wait
    /// may have found none running.
    func stopTaking() {
        state.withLockedValue { $0.draining = true }
    }

    /// Gives a slot back (to a waiting reader if there is one).
    func release() {
        let (next, idle): (CheckedContinuation<Void, Never>?, [CheckedContinuation<Void, Never>]) = state.withLockedValue { state in
            if !state.waiters.isEmpty {
                // The slot passes straight to the waiter: running stays the same.
                return (state.waiters.removeFirst(), [])
            }
            state.available += 1
            state.running -= 1
            guard state.running == 0 else { return (nil, []) }
            // Under the lock: whoever then sees nothing running sees the touch.
            activity?.touch()
            defer { state.idleWaiters.removeAll() }
            return (nil, state.idleWaiters)
        }
        next?.resume()
        for waiter in idle { waiter.resume() }
    }

    /// Returns when no request is running.
    func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLockedValue { state -> Bool in
                if state.running == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
