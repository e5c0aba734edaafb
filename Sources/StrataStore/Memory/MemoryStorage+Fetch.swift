import StrataModel
import StrataQuery

extension MemoryStorage {
    /// The rows a fetch selects, in order, as ``FetchEvaluator`` selects them.
    func fetch(_ fetch: ResolvedFetch) throws(StrataError) -> [MemoryRowReference] {
        let evaluator = try evaluator(for: fetch)
        return try evaluator.run(over: candidates(for: fetch))
    }

    /// How many rows a fetch selects (limit and offset applied).
    func count(_ fetch: ResolvedFetch) throws(StrataError) -> Int {
        let evaluator = try evaluator(for: fetch)
        return try evaluator.count(over: candidates(for: fetch))
    }

    /// Snapshots of fetched rows.
    func fetchSnapshots(_ fetch: ResolvedFetch) throws(StrataError) -> [Snapshot] {
        try self.fetch(fetch).map(snapshot(of:))
    }

    /// IDs of fetched rows.
    func fetchObjectIDs(_ fetch: ResolvedFetch) throws(StrataError) -> [ObjectID] {
        try self.fetch(fetch).map { objectID(entity: $0.row.entityName, primaryKey: $0.primaryKey) }
    }

    /// The snapshots of the objects that exist, in the order asked, each
    /// once. An ID naming an ancestor of the object's entity finds it too.
    func snapshots(for objectIDs: [ObjectID]) -> [Snapshot] {
        var seen: Set<ObjectID> = []
        return objectIDs.compactMap { id in
            guard let found = row(for: id) else { return nil }
            let snapshot = snapshot(of: MemoryRowReference(primaryKey: found.primaryKey, row: found.row))
            return seen.insert(snapshot.objectID).inserted ? snapshot : nil
        }
    }

    /// The destinations of a relationship of one object: a to-many's in
    /// order (ordered ones as ordered, others by primary key), a to-one's
    /// destination when it exists. An object that does not exist (or was
    /// never saved) and a relationship to another store have none. Fails
    /// with ``StrataError/Code/invalidValue`` for an entity the store does
    /// not hold or a relationship the entity does not have.
    func destinations(of relationship: String, for objectID: ObjectID) throws(StrataError) -> [ObjectID] {
        guard layout.entityNames.contains(objectID.entityName) else {
            throw StrataError(.invalidValue, "store \(identifier) does not hold entity '\(objectID.entityName)' (\(objectID))")
        }
        guard model.relationship(named: relationship, in: objectID.entityName) != nil else {
            throw StrataError(.invalidValue, "entity '\(objectID.entityName)' has no relationship '\(relationship)'")
        }
        guard let found = row(for: objectID),
              let resolved = layout.relationship(relationship, of: found.row.entityName) else { return [] }
        if resolved.storage == .toOne {
            guard case .object(let id)? = found.row.values[relationship], let key = id.primaryKey,
                  let target = row(root: resolved.destinationRoot, primaryKey: key) else { return [] }
            return [self.objectID(entity: target.entityName, primaryKey: key)]
        }
        return destinationKeys(resolved, of: found.primaryKey).compactMap { key in
            row(root: resolved.destinationRoot, primaryKey: key).map { self.objectID(entity: $0.entityName, primaryKey: key) }
        }
    }

    /// A row's snapshot: every persisted attribute and to-one of its entity
    /// (`.null` when nil).
    func snapshot(of reference: MemoryRowReference) -> Snapshot {
        let entity = reference.row.entityName
        var values: [String: PropertyValue] = [:]
        for attribute in layout.attributeOrder[entity] ?? [] {
            values[attribute.name] = reference.row.values[attribute.name] ?? .null
        }
        for name in layout.toOneNames[entity] ?? [] {
            values[name] = reference.row.values[name] ?? .null
        }
        return Snapshot(objectID: objectID(entity: entity, primaryKey: reference.primaryKey), version: reference.row.version, values: values)
    }

    private func evaluator(for fetch: ResolvedFetch) throws(StrataError) -> FetchEvaluator<MemoryRowAccessor> {
        guard layout.entityNames.contains(fetch.entityName) else {
            throw StrataError(.invalidValue, "store \(identifier) does not hold entity '\(fetch.entityName)'")
        }
        return try FetchEvaluator(fetch, model: model, accessor: MemoryRowAccessor(storage: self))
    }

    private func candidates(for fetch: ResolvedFetch) -> LazyMapSequence<[Int64: StoredRow], MemoryRowReference> {
        let rows = tables[model.rootEntityName(of: fetch.entityName)]?.rows ?? [:]
        return rows.lazy.map { MemoryRowReference(primaryKey: $0.key, row: $0.value) }
    }
}
