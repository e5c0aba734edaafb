import Foundation

/// A named reader of persistent history and the last token it has merged.
///
/// Purging keeps every transaction some live consumer has not seen yet.
public struct HistoryConsumer: Sendable, Hashable {
    /// The consumer's name (e.g. a server's `--history-consumer`).
    public var name: String
    /// The last transaction it has merged.
    public var token: HistoryToken
    /// When it last recorded a token.
    public var updated: Date

    /// Creates a consumer record.
    public init(name: String, token: HistoryToken, updated: Date) {
        self.name = name
        self.token = token
        self.updated = updated
    }
}
