import StrataModel

/// The persisted state of one object as a store holds it: its ID, its
/// optimistic-locking version and its values.
///
/// `values` holds every persisted attribute (`.null` for nil) and every
/// persisted to-one relationship (`.object(id)` or `.null`), keyed by
/// property name. To-many relationships are not in a snapshot: they load on
/// access through ``PersistentStore/destinations(of:for:)``.
public struct Snapshot: Sendable, Hashable {
    /// The object's permanent ID.
    public var objectID: ObjectID
    /// The version: 1 when inserted, +1 at every saved update.
    public var version: Int64
    /// Attribute and to-one values by property name.
    public var values: PropertyValues

    /// Creates a snapshot.
    public init(objectID: ObjectID, version: Int64, values: PropertyValues) {
        self.objectID = objectID
        self.version = version
        self.values = values
    }

    /// Creates a snapshot of a dictionary's values.
    public init(objectID: ObjectID, version: Int64, values: [String: PropertyValue]) {
        self.init(objectID: objectID, version: version, values: PropertyValues(values))
    }

    /// The value of a property (`.null` when absent).
    public subscript(key: String) -> PropertyValue {
        values[key] ?? .null
    }
}
