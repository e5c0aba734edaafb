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
///
/// The inserts' IDs come as arrays in the order of
/// ``StoreChanges/inserts`` (no dictionary keyed by temporary ID to build
/// and probe for every insert); inserted objects are at version 1.
public struct StoreCommit: Sendable, Hashable {
    /// The temporary ID of every insert, in the order of ``StoreChanges/inserts``.
    public var temporaryIDs: [ObjectID]
    /// The permanent ID given to each insert, in the same order as ``temporaryIDs``.
    public var insertedIDs: [ObjectID]
    /// The new version of every updated object.
    public var updatedVersions: [ObjectID: Int64]

    /// Creates a commit record; `insertedIDs[i]` is the permanent ID of
    /// the insert whose temporary ID is `temporaryIDs[i]`.
    public init(temporaryIDs: [ObjectID] = [], insertedIDs: [ObjectID] = [], updatedVersions: [ObjectID: Int64] = [:]) {
        precondition(temporaryIDs.count == insertedIDs.count, "a commit needs one permanent ID per temporary ID")
        self.temporaryIDs = temporaryIDs
        self.insertedIDs = insertedIDs
        self.updatedVersions = updatedVersions
    }

    /// Temporary ID → permanent ID for every insert (built on each call:
    /// keep it in a local rather than asking once per insert).
    public var permanentIDs: [ObjectID: ObjectID] {
        Dictionary(zip(temporaryIDs, insertedIDs), uniquingKeysWith: { first, _ in first })
    }

    /// The new version of every inserted (by permanent ID, version 1) and
    /// updated object (built on each call, like ``permanentIDs``).
    public var versions: [ObjectID: Int64] {
        var versions = updatedVersions
        versions.reserveCapacity(updatedVersions.count + insertedIDs.count)
        for id in insertedIDs { versions[id] = 1 }
        return versions
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
