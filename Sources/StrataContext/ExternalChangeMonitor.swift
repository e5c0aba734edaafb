import Foundation
import StrataModel
import StrataStore

/// Brings other processes' saves into this process: for every store of a
/// coordinator that records history, it follows the store's
/// ``HistoryTrackingStore/externalChanges(pollInterval:)``, publishes each
/// transaction as a ``ChangeSet`` on the coordinator's change hub (the row
/// cache drops the rows, contexts merge, server subscriptions are
/// notified, exactly as for a local save), records how far it has merged as
/// a history consumer, and purges history on a schedule.
///
/// When following a store fails (a read error, the file busy past its
/// deadline), the failure is reported to ``Options/onError``, the row cache
/// is emptied (what it holds can no longer be trusted) and following starts
/// again after a pause from the last transaction it published, so no other
/// process's commit goes unannounced. Only when history was purged past
/// that point (134301), was reset, or cannot be read three times in a row
/// does it start again from the store's newest transaction: what lies
/// between can no longer be announced, and contexts holding objects from
/// before should refetch them.
public final class ExternalChangeMonitor: Sendable {
    /// How the monitor works.
    public struct Options: Sendable {
        /// How often each store is checked for other connections' commits
        /// while they commit. A SQLite store checked in vain backs off, up
        /// to every 100 ms (or this, if longer), and returns to this
        /// interval when it finds another connection's transaction.
        public var pollInterval: Duration
        /// The consumer name under which the merged token is recorded in
        /// each store (nil: not recorded, so history is not held back for
        /// this process).
        public var consumerName: String?
        /// At most how often the consumer token is written.
        public var consumerInterval: Duration
        /// How often history is purged (nil: never, by this process).
        public var purgeInterval: Duration?
        /// Consumers silent for longer than this no longer hold history back,
        /// and with no live consumer transactions older than this go.
        public var retention: Duration
        /// Told of each failure (the store's display name and the error).
        public var onError: (@Sendable (String, any Error) -> Void)?

        /// Creates options.
        public init(
            pollInterval: Duration = .milliseconds(10),
            consumerName: String? = nil,
            consumerInterval: Duration = .seconds(1),
            purgeInterval: Duration? = .seconds(60),
            retention: Duration = .seconds(7 * 24 * 3600),
            onError: (@Sendable (String, any Error) -> Void)? = nil
        ) {
            self.pollInterval = pollInterval
            self.consumerName = consumerName
            self.consumerInterval = consumerInterval
            self.purgeInterval = purgeInterval
            self.retention = retention
            self.onError = onError
        }
    }

    /// The coordinator whose hub receives the changes.
    public let coordinator: Coordinator
    /// How it works.
    public let options: Options
    private let tasks: [Task<Void, Never>]

    /// Starts following every history-recording store of `coordinator`,
    /// from each store's newest transaction when its watcher first reads
    /// it: a commit made between this call and that read is not announced.
    /// ``start(coordinator:options:)`` has no such window.
    public convenience init(coordinator: Coordinator, options: Options = Options()) {
        self.init(coordinator: coordinator, options: options, from: [:])
    }

    /// Reads every history-recording store's newest token, then starts
    /// following from it: every commit made by another instance after this
    /// call returns is announced. A store whose token cannot be read is
    /// followed from its newest transaction when its watcher starts (and
    /// the failure goes to ``Options/onError``).
    public static func start(coordinator: Coordinator, options: Options = Options()) async -> ExternalChangeMonitor {
        var tokens: [String: HistoryToken] = [:]
        for store in coordinator.stores {
            guard let store = store as? any HistoryTrackingStore else { continue }
            do {
                tokens[store.identifier] = try await store.currentHistoryToken()
            } catch {
                options.onError?(store.storeDescription.displayName, error)
            }
        }
        return ExternalChangeMonitor(coordinator: coordinator, options: options, from: tokens)
    }

    private init(coordinator: Coordinator, options: Options, from tokens: [String: HistoryToken]) {
        self.coordinator = coordinator
        self.options = options
        var tasks: [Task<Void, Never>] = []
        for store in coordinator.stores {
            guard let store = store as? any HistoryTrackingStore else { continue }
            let start = tokens[store.identifier]
            tasks.append(Task { await Self.follow(store, from: start, coordinator: coordinator, options: options) })
            if let interval = options.purgeInterval, !store.isReadOnly {
                tasks.append(Task { await Self.purge(store, every: interval, options: options) })
            }
        }
        self.tasks = tasks
    }

    deinit {
        for task in tasks { task.cancel() }
    }

    /// Stops following (the coordinator's stores stay open).
    public func stop() async {
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    /// The change set that merges one transaction.
    public static func changeSet(of transaction: HistoryTransaction) -> ChangeSet {
        var changes = ChangeSet(contextName: transaction.contextName ?? transaction.author, origin: "history:\(transaction.origin)")
        for change in transaction.changes {
            switch change.kind {
            case .insert:
                changes.inserted.append(change.objectID)
                changes.versions[change.objectID] = change.version
            case .update:
                changes.updated[change.objectID, default: []].formUnion(change.changedProperties)
                changes.versions[change.objectID] = change.version
            case .delete:
                changes.deleted.append(change.objectID)
                changes.versions[change.objectID] = nil
            }
        }
        return changes
    }

    private static func follow(_ store: any HistoryTrackingStore, from start: HistoryToken?, coordinator: Coordinator, options: Options) async {
        let clock = ContinuousClock()
        var lastRecorded: ContinuousClock.Instant?
        var pending: HistoryToken?
        // Everything up to this token has been published (nil: from the
        // newest transaction when the watcher starts).
        var published = start
        // Failures in a row without progress past `published`.
        var failuresHere = 0
        while !Task.isCancelled {
            do {
                for try await update in store.externalChanges(after: published, pollInterval: options.pollInterval) {
                    for transaction in update.transactions {
                        coordinator.changes.publish(changeSet(of: transaction))
                    }
                    published = update.token
                    failuresHere = 0
                    guard let name = options.consumerName, !store.isReadOnly else { continue }
                    pending = update.token
                    if let last = lastRecorded, last.duration(to: clock.now) < options.consumerInterval { continue }
                    if let token = pending {
                        // A failed token write (the file busy past its
                        // deadline) is retried later; following goes on.
                        do {
                            try await store.recordConsumer(name, token: token)
                            pending = nil
                        } catch is CancellationError {
                            throw CancellationError()
                        } catch {
                            options.onError?(store.storeDescription.displayName, error)
                        }
                        lastRecorded = clock.now
                    }
                }
                // The stream ended without an error: look again after a pause.
                try await Task.sleep(for: options.pollInterval)
            } catch is CancellationError {
                break
            } catch {
                if Task.isCancelled { break }
                options.onError?(store.storeDescription.displayName, error)
                coordinator.rowCache.removeAll()
                failuresHere += 1
                if let error = error as? StrataError, error.code == .historyTokenExpired || error.code == .invalidValue {
                    // What followed `published` is gone (or the token is
                    // not this store's): go on from the newest transaction.
                    published = nil
                } else if failuresHere >= Self.failuresBeforeSkipping {
                    // The same read keeps failing (a history row this
                    // version cannot read): rather than announce nothing
                    // ever again, go on from the newest transaction. What
                    // lies between is not announced; the row cache was
                    // emptied above.
                    options.onError?(store.storeDescription.displayName, StrataError(.storeOpen, "history of \(store.storeDescription.displayName) could not be read after token \(published.map { String($0.value) } ?? "start") \(failuresHere) times in a row: following goes on from the newest transaction; changes in between are not announced"))
                    published = nil
                    failuresHere = 0
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        if let name = options.consumerName, let token = pending, !store.isReadOnly {
            try? await store.recordConsumer(name, token: token)
        }
    }

    /// Failures at the same point after which following skips to the newest transaction.
    static let failuresBeforeSkipping = 3

    private static func purge(_ store: any HistoryTrackingStore, every interval: Duration, options: Options) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
                _ = try await store.purgeHistory(maximumAge: options.retention)
            } catch is CancellationError {
                break
            } catch {
                options.onError?(store.storeDescription.displayName, error)
            }
        }
    }
}
