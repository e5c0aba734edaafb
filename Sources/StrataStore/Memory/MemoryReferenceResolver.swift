import StrataModel

/// Resolves the object IDs a change set refers to into permanent IDs of
/// rows that exist after the save.
struct MemoryReferenceResolver {
    /// The storage before the save.
    let storage: MemoryStorage
    /// Temporary → permanent ID of each insert of the save.
    let permanentIDs: [ObjectID: ObjectID]
    /// Rows the save deletes.
    let removed: Set<MemorySavePlan.Removal>

    /// The permanent ID and primary key `id` stands for, as a destination of
    /// `relationship`. Fails with 133010 for another store's object (or a
    /// relationship to an entity this store does not hold), 133000 for an
    /// object that no longer exists (or that the save deletes), and
    /// ``StrataError/Code/invalidValue`` for an unsaved object the save
    /// does not insert or an object of the wrong entity.
    func resolve(_ id: ObjectID, relationship: MemoryLayout.Relationship, context: String) throws(StrataError) -> (id: ObjectID, primaryKey: Int64) {
        let destination = relationship.description.destinationEntityName
        if relationship.storage == .external {
            throw StrataError(.externalRelationship, "\(context): \(id) cannot be stored: '\(destination)' lives in another store, and persisted relationships cannot cross stores (use a fetched property)")
        }
        let target: ObjectID
        if id.isTemporary {
            guard let permanent = permanentIDs[id] else {
                throw StrataError(.invalidValue, "\(context): \(id) is not saved and is not inserted by this save")
            }
            target = permanent
        } else {
            guard id.storeIdentifier == storage.identifier else {
                throw StrataError(.externalRelationship, "\(context): \(id) belongs to store \(id.storeIdentifier), not \(storage.identifier): persisted relationships cannot cross stores")
            }
            guard let found = storage.row(for: id), !removed.contains(MemorySavePlan.Removal(root: found.root, primaryKey: found.primaryKey)) else {
                throw StrataError(.objectNotFound, "\(context): \(id) does not exist (it was deleted)")
            }
            target = storage.objectID(entity: found.row.entityName, primaryKey: found.primaryKey)
        }
        guard storage.layout.isHeld(target.entityName, kindOf: destination), let key = target.primaryKey else {
            throw StrataError(.invalidValue, "\(context): \(id) is not a '\(destination)'")
        }
        return (target, key)
    }
}
