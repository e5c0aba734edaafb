/// What one look at a store's history found: the other instances'
/// transactions committed since the last look, and the token everything up
/// to which has now been seen (this instance's own transactions included).
public struct HistoryUpdate: Sendable, Hashable {
    /// Other instances' transactions, oldest first (may be empty when only
    /// this instance committed).
    public var transactions: [HistoryTransaction]
    /// Everything up to this token has been seen: a consumer that merged
    /// ``transactions`` may record it.
    public var token: HistoryToken

    /// Creates an update.
    public init(transactions: [HistoryTransaction], token: HistoryToken) {
        self.transactions = transactions
        self.token = token
    }
}
