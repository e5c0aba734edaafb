import StrataModel

/// One object as a memory-backed store holds it.
///
/// `values` holds the non-nil persisted attribute values and to-one
/// destinations (`.object(id)` with a permanent ID of the store); a missing
/// key means nil. `orderKeys` holds, for a to-one relationship whose inverse
/// is an ordered to-many, the object's position in its owner's list.
struct StoredRow: Sendable, Hashable {
    /// The object's entity (the hierarchy's root or one of its subentities).
    var entityName: String
    /// The optimistic-locking version: 1 on insert, +1 at every update.
    var version: Int64
    /// Non-nil attribute values and to-one destinations by property name.
    var values: [String: PropertyValue]
    /// Positions in ordered to-many lists, keyed by the to-one's name.
    var orderKeys: [String: Int64]

    /// Creates a row.
    init(entityName: String, version: Int64, values: [String: PropertyValue] = [:], orderKeys: [String: Int64] = [:]) {
        self.entityName = entityName
        self.version = version
        self.values = values
        self.orderKeys = orderKeys
    }
}
