import StrataModel
import StrataQuery
import StrataStore

extension Context {
    /// The objects a request selects, across every store that holds the
    /// entity, including unsaved changes: inserted objects that match, updated
    /// objects judged by their current values, deleted objects left out.
    public func fetch(_ request: FetchRequest, variables: [String: VariableValue] = [:]) async throws -> [ManagedObject] {
        try await fetch(resolved: coordinator.resolver.resolve(request, variables: variables))
    }

    /// The IDs of the objects a request selects (with unsaved changes, as ``fetch(_:variables:)``).
    public func fetchObjectIDs(_ request: FetchRequest, variables: [String: VariableValue] = [:]) async throws -> [ObjectID] {
        try await fetch(request, variables: variables).map(\.objectID)
    }

    /// How many objects a request selects (with unsaved changes).
    public func count(_ request: FetchRequest, variables: [String: VariableValue] = [:]) async throws -> Int {
        let resolved = try coordinator.resolver.resolve(request, variables: variables)
        let stores = self.stores(for: resolved)
        if pendingObjects(for: resolved).isEmpty, stores.count == 1 {
            return try await stores[0].count(resolved)
        }
        return try await fetch(resolved: resolved).count
    }

    /// Runs a resolved fetch.
    func fetch(resolved fetch: ResolvedFetch) async throws -> [ManagedObject] {
        let stores = self.stores(for: fetch)
        let pending = pendingObjects(for: fetch)
        if pending.isEmpty, stores.count == 1 {
            let snapshots = try await stores[0].fetchSnapshots(fetch)
            // One growth of the registry instead of a rehash at every doubling.
            if let first = snapshots.first { graph.reserveCapacity(snapshots.count, like: first.objectID) }
            return snapshots.map { apply($0) }
        }

        // Fetch unwindowed (or the top offset+limit of each store when only
        // merging stores), then filter, sort and window in memory.
        var unwindowed = fetch
        unwindowed.offset = 0
        unwindowed.limit = pending.isEmpty ? fetch.limit.map { $0 + fetch.offset } : nil
        let changed = Set(pending.map(\.objectID))
        var candidates: [ManagedObject] = []
        var seen: Set<ObjectID> = []
        for store in stores {
            for snapshot in try await store.fetchSnapshots(unwindowed) where !changed.contains(snapshot.objectID) {
                let object = apply(snapshot)
                if seen.insert(object.objectID).inserted { candidates.append(object) }
            }
        }
        let live = pending.filter { !$0.isDeleted }
        let model = self.model
        let matching = try await evaluateLoading { accessor in
            let evaluator = try FetchEvaluator(fetch, model: model, accessor: accessor)
            return try live.filter { try evaluator.matches($0) }
        }
        let combined = candidates + matching
        let sorted = try await evaluateLoading { accessor in
            try FetchEvaluator(fetch, model: model, accessor: accessor).sort(combined)
        }
        let start = min(fetch.offset, sorted.count)
        let end = fetch.limit.map { min(sorted.count, start + $0) } ?? sorted.count
        return Array(sorted[start..<end])
    }

    /// The stores holding any entity the fetch selects.
    func stores(for fetch: ResolvedFetch) -> [any PersistentStore] {
        let entities = fetch.includesSubentities ? model.hierarchy(of: fetch.entityName) : [fetch.entityName]
        var result: [any PersistentStore] = []
        for entity in entities {
            for store in coordinator.stores(for: entity) where !result.contains(where: { $0.identifier == store.identifier }) {
                result.append(store)
            }
        }
        return result
    }

    /// Registered objects of the fetched entities with unsaved changes.
    func pendingObjects(for fetch: ResolvedFetch) -> [ManagedObject] {
        let entities = Set(fetch.includesSubentities ? model.hierarchy(of: fetch.entityName) : [fetch.entityName])
        return graph.changedObjects.filter { entities.contains($0.entityName) }
    }
}
