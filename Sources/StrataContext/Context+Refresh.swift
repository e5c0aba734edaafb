import StrataModel
import StrataQuery

extension Context {
    /// Refreshes an object from its store.
    ///
    /// `mergeChanges: false`: the object becomes a fault; its unsaved
    /// changes, transient values and cached fetched properties are dropped.
    /// `mergeChanges: true`: its persisted values are reloaded, its unsaved
    /// changes re-applied on top, transient values kept, and fetched
    /// properties re-evaluated at their next access.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) async throws {
        guard !object.isInserted else { return }
        object.fetchedCache.removeAll()
        object.committedToMany.removeAll()
        guard mergeChanges else {
            object.committed = nil
            object.version = 0
            object.changes.removeAll()
            object.toManyChanges.removeAll()
            object.transients.removeAll()
            object.isDeleted = false
            return
        }
        let store = try coordinator.store(for: object.objectID)
        guard let snapshot = try await store.snapshots(for: [object.objectID]).first else {
            vanished.insert(object.objectID)
            throw StrataError(.objectNotFound, "\(object.objectID) no longer exists in store \(store.storeDescription.displayName)")
        }
        object.committed = snapshot.values
        object.version = snapshot.version
        for (key, value) in object.changes where (snapshot.values[key] ?? .null) == value { object.changes[key] = nil }
    }

    /// Discards every unsaved change: inserted objects are forgotten, deleted
    /// ones restored, updated ones returned to their committed values.
    public func rollback() {
        for object in graph.registered.values {
            if object.isInserted {
                graph.unregister(object.objectID)
                continue
            }
            object.changes.removeAll()
            object.toManyChanges.removeAll()
            object.transients.removeAll()
            object.isDeleted = false
        }
        // Let go of the forgotten inserted objects now rather than at the
        // next save or fetch.
        _ = graph.changedObjects
    }

    /// Forgets every object (unsaved changes included).
    public func reset() {
        graph.removeAll()
        vanished.removeAll()
    }

    /// Merges a change set saved by another context: updated objects reload
    /// their persisted values (unsaved local changes stay on top), deleted
    /// objects are dropped, lists and fetched properties that may have
    /// changed are invalidated. One request per store, not one per object.
    public func merge(_ changes: ChangeSet) async throws {
        guard changes.origin != token, !changes.isEmpty else { return }
        let deleted = Set(changes.deleted)
        for id in deleted {
            graph.unregister(id)
            vanished.insert(id)
        }
        // Local references to deleted objects would be written as dangling keys.
        graph.dropReferences(to: deleted)
        let changedEntities = changes.entityNames
        let affectedEntities = Set(changedEntities.flatMap { model.ancestry(of: $0) })
        // Only objects with relationships or fetched results have lists to drop.
        for object in graph.referenceHolders {
            // Loaded lists that could hold changed objects.
            for relationship in model.relationships(of: object.entityName) where relationship.isToMany {
                if affectedEntities.contains(relationship.destinationEntityName) || model.hierarchy(of: relationship.destinationEntityName).contains(where: changedEntities.contains) {
                    object.committedToMany[relationship.name] = nil
                }
            }
            for fetched in model.fetchedProperties(of: object.entityName) where object.fetchedCache[fetched.name] != nil {
                if model.hierarchy(of: fetched.entityName).contains(where: changedEntities.contains) {
                    object.fetchedCache[fetched.name] = nil
                }
            }
            if !deleted.isEmpty {
                for (key, list) in object.committedToMany { object.committedToMany[key] = list.filter { !deleted.contains($0) } }
            }
        }
        // Reload updated objects this context holds, one batch per store.
        let stale = changes.updated.keys.compactMap { id -> ManagedObject? in
            guard let object = graph.registeredObject(for: id), !object.isFault, !object.isInserted else { return nil }
            if let version = changes.versions[id], version == object.version { return nil }
            return object
        }
        var byStore: [String: [ManagedObject]] = [:]
        for object in stale { byStore[object.objectID.storeIdentifier, default: []].append(object) }
        for (_, objects) in byStore {
            let store = try coordinator.store(for: objects[0].objectID)
            let snapshots = try await store.snapshots(for: objects.map(\.objectID))
            for snapshot in snapshots { apply(snapshot) }
            let found = Set(snapshots.map(\.objectID))
            for object in objects where !found.contains(object.objectID) {
                graph.unregister(object.objectID)
                vanished.insert(object.objectID)
            }
        }
    }
}
