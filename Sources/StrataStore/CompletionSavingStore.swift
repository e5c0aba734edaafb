/// A store that takes a save with a completion handler instead of a
/// suspension: a caller that is not a task (an event loop handing a small
/// save on) starts it without a task or an actor hop, and hears of it on
/// the store's own writer thread.
public protocol CompletionSavingStore: PersistentStore {
    /// Writes one change set, all or nothing, as ``PersistentStore/save(_:)``
    /// does (same checks, errors and group commit), and calls `completion`
    /// exactly once with what `save(_:)` would return or throw: on the
    /// store's writer thread once the save is committed (or failed), or on
    /// the caller's thread when it is answered before being queued (a
    /// closed or read-only store, an empty change set). `completion` must
    /// be short and must not block: it delays every save queued after it.
    nonisolated func save(_ changes: StoreChanges, completion: @escaping @Sendable (Result<StoreSaveResult, any Error>) -> Void)
}
