import StrataModel

/// A ``PersistentStore/snapshots(for:)`` request of a store that keeps
/// objects in tables: the keys to read per table, then the snapshots read
/// put in the order asked, each once, those not of the ID's entity (or a
/// subentity) left out.
package struct SnapshotRequest: Sendable {
    /// The primary keys to read, by table (each once).
    package private(set) var keysByTable: [String: Set<Int64>] = [:]
    private var wanted: [(table: String, id: ObjectID, key: Int64)] = []

    /// The request for `objectIDs`: IDs of other stores, unsaved objects
    /// and entities `table` does not place are left out.
    package init(_ objectIDs: [ObjectID], storeIdentifier: String, table: (String) -> String?) {
        for id in objectIDs {
            guard id.storeIdentifier == storeIdentifier, let key = id.primaryKey, let name = table(id.entityName) else { continue }
            keysByTable[name, default: []].insert(key)
            wanted.append((name, id, key))
        }
    }

    /// Whether there is nothing to read.
    package var isEmpty: Bool { wanted.isEmpty }

    /// The snapshots read (`found`: table → key → snapshot) in the order
    /// asked, each object once, each of the asked ID's entity or below.
    package func answer(_ found: [String: [Int64: Snapshot]], model: ObjectModel) -> [Snapshot] {
        var seen: Set<ObjectID> = []
        var result: [Snapshot] = []
        result.reserveCapacity(wanted.count)
        for item in wanted {
            guard let snapshot = found[item.table]?[item.key],
                  model.isEntity(snapshot.objectID.entityName, kindOf: item.id.entityName),
                  seen.insert(snapshot.objectID).inserted else { continue }
            result.append(snapshot)
        }
        return result
    }
}
