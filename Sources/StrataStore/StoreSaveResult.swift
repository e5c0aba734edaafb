import StrataModel

/// What a store answers to ``PersistentStore/save(_:)``.
public enum StoreSaveResult: Sendable, Hashable {
    /// Everything was written and committed.
    case committed(StoreCommit)
    /// Nothing was written: these objects changed (or vanished) since the
    /// versions the save was based on.
    case conflicts([StoreConflict])
    /// Nothing was written: these inserts or updates break a uniqueness constraint.
    case constraintConflicts([ConstraintConflict])
}

/// A committed save.
public struct StoreCommit: Sendable, Hashable {
    /// Temporary ID → permanent ID for every insert.
    public var permanentIDs: [ObjectID: ObjectID]
    /// The new version of every inserted (by permanent ID) and updated object.
    public var versions: [ObjectID: Int64]

    /// Creates a commit record.
    public init(permanentIDs: [ObjectID: ObjectID] = [:], versions: [ObjectID: Int64] = [:]) {
        self.permanentIDs = permanentIDs
        self.versions = versions
    }
}

/// An optimistic-locking conflict on one object.
public struct StoreConflict: Sendable, Hashable {
    /// The object.
    public var objectID: ObjectID
    /// The version the save was based on.
    public var expectedVersion: Int64
    /// The version in the store now; 0 when the object was deleted meanwhile.
    public var currentVersion: Int64
    /// The store's current state of the object; nil when deleted.
    public var currentSnapshot: Snapshot?

    /// Creates a conflict.
    public init(objectID: ObjectID, expectedVersion: Int64, currentVersion: Int64, currentSnapshot: Snapshot?) {
        self.objectID = objectID
        self.expectedVersion = expectedVersion
        self.currentVersion = currentVersion
        self.currentSnapshot = currentSnapshot
    }
}

/// A uniqueness-constraint conflict: an object would share the values of a
/// uniqueness constraint with another.
public struct ConstraintConflict: Sendable, Hashable {
    /// The entity whose constraint is broken.
    public var entityName: String
    /// The constraint's property names.
    public var constraint: [String]
    /// The clashing values, by property name.
    public var values: [String: PropertyValue]
    /// The object being saved (temporary ID for inserts).
    public var objectID: ObjectID
    /// The saved object that already has these values, when there is one.
    public var existingObjectID: ObjectID?

    /// Creates a constraint conflict.
    public init(entityName: String, constraint: [String], values: [String: PropertyValue], objectID: ObjectID, existingObjectID: ObjectID?) {
        self.entityName = entityName
        self.constraint = constraint
        self.values = values
        self.objectID = objectID
        self.existingObjectID = existingObjectID
    }
}
