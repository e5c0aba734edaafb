import StrataModel
import StrataQuery

/// Reads a ``MemoryStorage`` for ``FetchEvaluator`` and ``PredicateEvaluator``.
///
/// Relationships are resolved to their ``MemoryLayout/Relationship`` once,
/// when a predicate is compiled; per-object reads are dictionary lookups.
struct MemoryRowAccessor: ObjectGraphAccessor {
    typealias Object = MemoryRowReference
    typealias RelationshipKey = MemoryLayout.Relationship

    /// The storage read (a copy-on-write value: reading never copies).
    let storage: MemoryStorage

    func relationshipKey(_ relationship: RelationshipDescription, entity: String) throws(StrataError) -> MemoryLayout.Relationship {
        if let resolved = storage.layout.relationship(relationship.name, of: entity) { return resolved }
        // Not held, or transient: never any destination.
        return MemoryLayout.Relationship(description: relationship, storage: relationship.isTransient ? .transient : .external, destinationRoot: storage.model.rootEntityName(of: relationship.destinationEntityName))
    }

    func value(_ attribute: AttributeDescription, of object: MemoryRowReference) -> PropertyValue {
        object.row.values[attribute.name] ?? .null
    }

    /// The destination row; for a to-one left pointing at a deleted row, a
    /// row without values under the deleted key. That is what SQL sees of
    /// the same data (a foreign key that is not NULL, joined to nothing):
    /// `author == nil` is false, `author.name == nil` true, and
    /// `author.books` still lists the rows whose foreign key holds that key.
    func destination(_ relationship: MemoryLayout.Relationship, of object: MemoryRowReference) -> MemoryRowReference? {
        guard relationship.storage == .toOne,
              case .object(let id)? = object.row.values[relationship.description.name],
              let key = id.primaryKey else { return nil }
        let row = storage.row(root: relationship.destinationRoot, primaryKey: key) ?? StoredRow(entityName: id.entityName, version: 0)
        return MemoryRowReference(primaryKey: key, row: row)
    }

    func destinations(_ relationship: MemoryLayout.Relationship, of object: MemoryRowReference) -> [MemoryRowReference] {
        storage.destinationKeys(relationship, of: object.primaryKey).compactMap { key in
            storage.row(root: relationship.destinationRoot, primaryKey: key).map { MemoryRowReference(primaryKey: key, row: $0) }
        }
    }

    func destinationCount(_ relationship: MemoryLayout.Relationship, of object: MemoryRowReference) -> Int {
        storage.destinationKeys(relationship, of: object.primaryKey).count
    }

    func objectID(of object: MemoryRowReference) -> ObjectID {
        storage.objectID(entity: object.row.entityName, primaryKey: object.primaryKey)
    }

    func entityName(of object: MemoryRowReference) -> String {
        object.row.entityName
    }

    func primaryKey(of object: MemoryRowReference) -> Int64? {
        object.primaryKey
    }
}
