import NIOConcurrencyHelpers

/// The saves waiting for a SQLite store's writer, and whether the writer
/// is draining them (see ``SQLiteStore/save(_:)``).
///
/// Saves are appended from any thread (``SQLiteStore/save(_:completion:)``); the drain takes them group
/// after group on the writer's own queue, without going back to the actor
/// between groups. Exactly one drain runs while ``isDraining``: the save
/// that finds none running starts one, and a drain that finds nothing
/// waiting ends (under the same lock, so a save appended meanwhile either
/// is taken by it or starts the next).
final class SQLiteSaveQueue: Sendable {
    private struct State {
        var pending: [PendingSave] = []
        var isDraining = false
        /// Set by ``close()``: no save is taken from then on.
        var isClosed = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())

    /// How many saves wait for the next group.
    var count: Int { state.withLockedValue { $0.pending.count } }

    /// Whether a drain is running (a group being written, or about to be).
    var isDraining: Bool { state.withLockedValue { $0.isDraining } }

    /// How many callers of ``waitUntilIdle()`` wait (for tests).
    var idleWaiterCount: Int { state.withLockedValue { $0.idleWaiters.count } }

    /// What ``append(_:)`` did.
    enum Appended {
        /// Queued behind a running drain.
        case queued
        /// Queued, and no drain was running: the caller must start one.
        case startDrain
        /// Refused: the store is closing (``close()``).
        case closed
    }

    /// Queues a save, unless the store is closing.
    func append(_ save: consuming PendingSave) -> Appended {
        // Moved into the queue through an optional: the closure cannot
        // consume the parameter, and a copy retains everything it holds.
        var moving: PendingSave? = consume save
        return state.withLockedValue { state in
            guard !state.isClosed else { return .closed }
            if let save = moving.take() { state.pending.append(save) }
            guard !state.isDraining else { return .queued }
            state.isDraining = true
            return .startDrain
        }
    }

    /// Takes no save from now on. A save either was queued before (and a
    /// drain, which ``waitUntilIdle()`` waits for, writes it) or is refused.
    func close() {
        state.withLockedValue { $0.isClosed = true }
    }

    /// The next group to write, taken off the queue: every waiting save,
    /// except that a streamed save is written in a group of its own (its
    /// transaction waits for its supplier, and no other save waits with
    /// it). Nil when none waits: the drain ends, and closers waiting for
    /// it are resumed.
    func nextGroup() -> [PendingSave]? {
        let (group, waiters): ([PendingSave]?, [CheckedContinuation<Void, Never>]) = state.withLockedValue { state in
            guard !state.pending.isEmpty else {
                state.isDraining = false
                let waiters = state.idleWaiters
                state.idleWaiters.removeAll()
                return (nil, waiters)
            }
            if state.pending[0].feed != nil {
                return ([state.pending.removeFirst()], [])
            }
            if let streamed = state.pending.firstIndex(where: { $0.feed != nil }) {
                let group = Array(state.pending[..<streamed])
                state.pending.removeFirst(streamed)
                return (group, [])
            }
            let group = state.pending
            state.pending.removeAll(keepingCapacity: true)
            return (group, [])
        }
        for waiter in waiters { waiter.resume() }
        return group
    }

    /// Returns once no drain runs (every save queued before is answered).
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLockedValue { state in
                guard state.isDraining else { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
