import NIOConcurrencyHelpers
import Synchronization

/// Broadcasts committed change sets to every subscriber (contexts that merge
/// automatically, server subscriptions).
public final class ChangeHub: Sendable {
    private let subscribers = NIOLockedValueBox<[Int: AsyncStream<ChangeSet>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)
    private let beforeDelivery: (@Sendable (ChangeSet) -> Void)?

    /// Creates a hub with no subscribers. `beforeDelivery` runs
    /// synchronously in ``publish(_:)`` before any subscriber hears of the
    /// change set (the coordinator's row cache invalidates there, so the
    /// saving context returns only after stale rows are gone).
    public init(beforeDelivery: (@Sendable (ChangeSet) -> Void)? = nil) {
        self.beforeDelivery = beforeDelivery
    }

    /// A stream of every change set published from now on. The stream ends
    /// when the consumer stops iterating (or the returned stream is dropped).
    public func subscribe(bufferingNewest limit: Int = 1024) -> AsyncStream<ChangeSet> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<ChangeSet>.makeStream(bufferingPolicy: .bufferingNewest(limit))
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLockedValue { _ = $0.removeValue(forKey: id) }
        }
        subscribers.withLockedValue { $0[id] = continuation }
        return stream
    }

    /// Sends a change set to every subscriber.
    public func publish(_ changes: ChangeSet) {
        guard !changes.isEmpty else { return }
        beforeDelivery?(changes)
        let targets = subscribers.withLockedValue { Array($0.values) }
        for continuation in targets { continuation.yield(changes) }
    }

    /// Ends every subscription.
    public func finish() {
        let targets = subscribers.withLockedValue { all in
            defer { all.removeAll() }
            return Array(all.values)
        }
        for continuation in targets { continuation.finish() }
    }
}
