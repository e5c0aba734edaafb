/// What one ``HistoryTrackingStore/purgeHistory(maximumAge:)`` removed.
public struct HistoryPurge: Sendable, Hashable {
    /// Transactions removed.
    public var transactions: Int
    /// Every transaction up to this token is gone: history after an older
    /// token now fails with 134301. Nil when nothing was ever purged.
    public var purgedThrough: HistoryToken?

    /// Creates a purge result.
    public init(transactions: Int, purgedThrough: HistoryToken?) {
        self.transactions = transactions
        self.purgedThrough = purgedThrough
    }
}
