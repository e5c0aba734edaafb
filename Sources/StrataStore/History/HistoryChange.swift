import StrataModel

/// One object's change inside a ``HistoryTransaction``.
public struct HistoryChange: Sendable, Hashable {
    /// What happened to the object.
    public enum Kind: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The object was inserted.
        case insert = 0
        /// Some of its properties changed.
        case update = 1
        /// The object was deleted.
        case delete = 2

        /// `insert`, `update` or `delete`.
        public var description: String {
            switch self {
            case .insert: "insert"
            case .update: "update"
            case .delete: "delete"
            }
        }
    }

    /// What happened.
    public var kind: Kind
    /// The object (its permanent ID).
    public var objectID: ObjectID
    /// The object's version after the transaction; 0 for a deletion.
    public var version: Int64
    /// The persisted properties the save set (for an insert, those given a
    /// value), sorted by name; empty for a deletion.
    public var changedProperties: [String]
    /// For a deletion: the last values of the entity's attributes marked
    /// `preserveAfterDeletion` (absent when nil); empty otherwise.
    public var tombstone: [String: PropertyValue]

    /// Creates a change.
    public init(kind: Kind, objectID: ObjectID, version: Int64, changedProperties: [String] = [], tombstone: [String: PropertyValue] = [:]) {
        self.kind = kind
        self.objectID = objectID
        self.version = version
        self.changedProperties = changedProperties
        self.tombstone = tombstone
    }
}
