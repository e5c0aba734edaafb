/// A position in one store's persistent history: the token of the last
/// transaction a consumer has seen.
///
/// Tokens grow with every committed save and are never reused (not even
/// after a purge), so "everything after this token" is well defined. A token
/// belongs to one store; comparing tokens of different stores is
/// meaningless.
public struct HistoryToken: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The store the token belongs to (its ``PersistentStore/identifier``).
    public var storeIdentifier: String
    /// The transaction number, from 1; 0 means "before the first transaction".
    public var value: Int64

    /// Creates a token.
    public init(storeIdentifier: String, value: Int64) {
        self.storeIdentifier = storeIdentifier
        self.value = value
    }

    /// Orders tokens of one store by transaction number.
    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool {
        (lhs.storeIdentifier, lhs.value) < (rhs.storeIdentifier, rhs.value)
    }

    /// `<store>#<value>`.
    public var description: String { "\(storeIdentifier)#\(value)" }
}
