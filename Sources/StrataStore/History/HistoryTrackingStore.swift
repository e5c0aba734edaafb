/// A store that records persistent history: every committed save, from any
/// process, as a ``HistoryTransaction`` (Core Data's persistent history
/// tracking), and that can tell its process about other processes' saves.
///
/// Contract:
/// - Every committed ``PersistentStore/save(_:)`` records exactly one
///   transaction, in the same database transaction as the data (a save that
///   rolls back records nothing); tokens grow and are never reused.
/// - ``history(after:limit:)`` answers the transactions after a token in
///   token order; a token older than the purge horizon throws 134301
///   (``StrataError/Code/historyTokenExpired``), since some of what follows
///   it is gone.
/// - ``externalChanges(after:pollInterval:)`` yields, soon after they
///   commit, the transactions written by any other open instance of the
///   store (in this or another process), never those of this instance.
/// - A token newer than the store's newest transaction was never handed
///   out by it: reading or recording it is ``StrataError/Code/invalidValue``.
public protocol HistoryTrackingStore: PersistentStore {
    /// Identifies this open instance of the store; it is recorded as the
    /// ``HistoryTransaction/origin`` of the transactions it writes.
    nonisolated var historyOrigin: String { get }

    /// The token of the last committed transaction (value 0 when there is none).
    func currentHistoryToken() async throws -> HistoryToken

    /// The transactions after `token` (all retained ones when nil), oldest
    /// first, at most `limit`. Throws 134301 when `token` is older than the
    /// purge horizon.
    func history(after token: HistoryToken?, limit: Int) async throws -> [HistoryTransaction]

    /// Records that consumer `name` has merged everything up to `token`.
    func recordConsumer(_ name: String, token: HistoryToken) async throws

    /// Every consumer and its last recorded token.
    func consumers() async throws -> [HistoryConsumer]

    /// Removes the transactions every consumer heard from within
    /// `maximumAge` has merged; consumers silent for longer no longer hold
    /// history back (when they return, their tokens fail with 134301). With
    /// no live consumer, transactions older than `maximumAge` are removed.
    func purgeHistory(maximumAge: Duration) async throws -> HistoryPurge

    /// Other instances' transactions after `token` (nil: from the newest
    /// transaction when the stream starts) as they commit, checked every
    /// `pollInterval` (a store may look less often while none arrives, as
    /// the SQLite store does): one update each time some connection has committed
    /// since the last look (a long backlog comes as several updates, in
    /// order). The stream ends when its consumer stops, and with an error
    /// when reading fails (e.g. history was purged past `token` or what it
    /// had seen: 134301).
    nonisolated func externalChanges(after token: HistoryToken?, pollInterval: Duration) -> AsyncThrowingStream<HistoryUpdate, any Error>
}
