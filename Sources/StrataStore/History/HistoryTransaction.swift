import Foundation

/// One committed save as persistent history recorded it: who saved, when,
/// from which process, and every object it changed.
public struct HistoryTransaction: Sendable, Hashable {
    /// The transaction's position in its store's history.
    public var token: HistoryToken
    /// When the save committed.
    public var timestamp: Date
    /// The saving context's ``StoreChanges/author`` (Core Data's transaction author).
    public var author: String?
    /// The saving context's name.
    public var contextName: String?
    /// The operating-system process that saved.
    public var processID: Int32
    /// The open store instance that wrote it (``HistoryTrackingStore/historyOrigin``):
    /// a process skips the transactions its own instance wrote.
    public var origin: String
    /// The objects changed, in the order the store wrote them.
    public var changes: [HistoryChange]

    /// Creates a transaction.
    public init(token: HistoryToken, timestamp: Date, author: String?, contextName: String?, processID: Int32, origin: String, changes: [HistoryChange]) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.processID = processID
        self.origin = origin
        self.changes = changes
    }
}
