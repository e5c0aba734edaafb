import StrataModel
import StrataQuery
import StrataStore

extension Context {
    /// The objects a request selects, across every store that holds the
    /// entity, including unsaved changes: inserted objects that match, updated
    /// objects judged by their current values, deleted objects left out.
    public func fetch(_ request: FetchRequest, variables: [String: VariableValue] = [:]) async throws -> [ManagedObject] {
        try await fetch(resolved: restricted(coordinator.resolver.resolve(request, variables: variables)))
    }

    /// `fetch` limited to what ``readRestriction`` lets this context
    /// read (see ``ResolvedFetch/restricted(by:)``).
    func restricted(_ fetch: ResolvedFetch) throws -> ResolvedFetch {
        guard let readRestriction else { return fetch }
        return try fetch.restricted(by: readRestriction)
    }

    /// The IDs of the objects a request selects (with unsaved changes, as ``fetch(_:variables:)``).
    public func fetchObjectIDs(_ request: FetchRequest, variables: [String: VariableValue] = [:]) async throws -> [ObjectID] {
        try await fetch(request, variables: variables).map(\.objectID)
    }

    /// How many objects a request selects (with unsaved changes).
    public func count(_ request: FetchRequest, variables: [String: VariableValue] = [:]) async throws -> Int {
        let resolved = try restricted(coordinator.resolver.resolve(request, variables: variables))
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
            return try await fetchStreaming(fetch, from: stores[0])
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

    /// A fetch from one store with no pending changes to merge: each batch
    /// of snapshots is registered while the store reads the next.
    ///
    /// While it awaits a batch, or the end of the stream after the last
    /// one, the context may run other work (actors are reentrant). When
    /// that work unregistered any object of the result (a reset, a merged
    /// delete), every snapshot is applied again at the end, so that the
    /// result is what applying them all after the read gives. A fetch whose
    /// task is cancelled throws `CancellationError` (its stream may have
    /// ended early).
    private func fetchStreaming(_ fetch: ResolvedFetch, from store: any PersistentStore) async throws -> [ManagedObject] {
        var batches: [[Snapshot]] = []
        var objects: [ManagedObject] = []
        for try await batch in try await store.fetchSnapshotBatches(fetch) {
            if batches.isEmpty, let first = batch.first {
                // The first batch is the whole result when the store does
                // not stream; otherwise both grow by doubling.
                graph.reserveCapacity(batch.count, like: first.objectID)
                objects.reserveCapacity(batch.count)
            }
            for snapshot in batch { objects.append(apply(snapshot)) }
            batches.append(batch)
        }
        try Task.checkCancellation()
        // Registering a batch runs without a suspension: an object left
        // unregistered was unregistered while the context awaited the store.
        guard objects.contains(where: { !$0.isRegistered }) else { return objects }
        return batches.flatMap { $0.map { apply($0) } }
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
