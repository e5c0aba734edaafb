import StrataModel

/// A change set checked against a ``MemoryStorage``: every ID resolved,
/// every value normalised, primary keys and versions chosen. Applying it
/// cannot fail.
struct MemorySavePlan: Sendable {
    /// One inserted or updated row.
    struct Write: Sendable {
        /// The ID as the change set gave it (temporary for inserts).
        var objectID: ObjectID
        /// The permanent ID.
        var permanentID: ObjectID
        /// The hierarchy's root.
        var root: String
        /// The primary key.
        var primaryKey: Int64
        /// The version after the save.
        var version: Int64
        /// Normalised attribute values (`.null` clears).
        var attributes: [(name: String, value: PropertyValue)]
        /// To-one destinations as `.object(permanentID)` or `.null`.
        var toOnes: [(name: String, value: PropertyValue)]
        /// To-many destination lists as primary keys of the destination hierarchy.
        var toMany: [(name: String, keys: [Int64])]
    }

    /// A row that goes away.
    struct Removal: Sendable, Hashable {
        /// The hierarchy's root.
        var root: String
        /// The primary key.
        var primaryKey: Int64
    }

    /// New rows, in the order given.
    var inserts: [Write] = []
    /// Changed rows, in the order given.
    var updates: [Write] = []
    /// Deleted rows (those still present).
    var deletes: [Removal] = []
    /// The new primary-key counter of each hierarchy that gains rows.
    var lastPrimaryKeys: [String: Int64] = [:]
    /// Temporary → permanent ID of each insert.
    var permanentIDs: [ObjectID: ObjectID] = [:]

    /// What the store answers once the plan is applied.
    var commit: StoreCommit {
        var versions: [ObjectID: Int64] = [:]
        let removed = Set(deletes)
        for write in updates where !removed.contains(Removal(root: write.root, primaryKey: write.primaryKey)) {
            versions[write.objectID] = write.version
        }
        return StoreCommit(temporaryIDs: inserts.map(\.objectID), insertedIDs: inserts.map(\.permanentID), updatedVersions: versions)
    }
}
