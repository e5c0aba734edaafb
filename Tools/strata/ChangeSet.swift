import StrataWire

/// Changes gathered into one save: a single `insert`, `update` or `delete`,
/// or everything between `begin` and `save` in the shell.
///
/// Inserts get temporary IDs (`new-1`, `new-2`, …) that later changes of
/// the same set may name: an update of one changes the insert's values, a
/// delete of one drops it, and relationships may point to it.
struct ChangeSet: Sendable {
    private(set) var inserts: [Strata_V1_InsertedObject] = []
    private(set) var updates: [Strata_V1_UpdatedObject] = []
    private(set) var deletes: [Strata_V1_DeletedObject] = []
    private var nextTemporaryNumber = 1

    /// Whether nothing has been gathered.
    var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }

    /// The number of changes gathered.
    var count: Int { inserts.count + updates.count + deletes.count }

    /// Entity names of the inserts, by temporary ID.
    var temporaryEntities: [String: String] {
        Dictionary(inserts.map { ($0.temporaryID, $0.entity) }, uniquingKeysWith: { first, _ in first })
    }

    /// Adds an insert and returns its temporary ID.
    mutating func insert(entity: String, configuration: String, values: [String: Strata_V1_Value]) -> String {
        let temporaryID = "new-\(nextTemporaryNumber)"
        nextTemporaryNumber += 1
        inserts.append(Strata_V1_InsertedObject.with {
            $0.temporaryID = temporaryID
            $0.entity = entity
            $0.configuration = configuration
            $0.values = values
        })
        return temporaryID
    }

    /// Adds an update (or changes a pending insert's values).
    mutating func update(id: String, baseVersion: Int64, values: [String: Strata_V1_Value]) {
        if let index = inserts.firstIndex(where: { $0.temporaryID == id }) {
            inserts[index].values.merge(values) { _, new in new }
            return
        }
        if let index = updates.firstIndex(where: { $0.id == id }) {
            updates[index].values.merge(values) { _, new in new }
            if baseVersion != 0 { updates[index].baseVersion = baseVersion }
            return
        }
        updates.append(Strata_V1_UpdatedObject.with {
            $0.id = id
            $0.baseVersion = baseVersion
            $0.values = values
        })
    }

    /// Adds a delete (or drops a pending insert).
    mutating func delete(id: String, baseVersion: Int64 = 0) {
        if let index = inserts.firstIndex(where: { $0.temporaryID == id }) {
            inserts.remove(at: index)
            return
        }
        updates.removeAll { $0.id == id }
        guard !deletes.contains(where: { $0.id == id }) else { return }
        deletes.append(Strata_V1_DeletedObject.with {
            $0.id = id
            $0.baseVersion = baseVersion
        })
    }

    /// The save request carrying every change.
    var request: Strata_V1_SaveRequest {
        Strata_V1_SaveRequest.with {
            $0.inserts = inserts
            $0.updates = updates
            $0.deletes = deletes
        }
    }
}
