import StrataModel
import StrataStore

extension Coordinator {
    /// The most objects a save writes without a context: past this, the
    /// cost of a context is spread over enough objects not to matter (and
    /// a context streams large saves to the store).
    public static let directInsertLimit = Context.rowCacheWriteThroughLimit

    /// The origin of change sets saved without a context: no context's
    /// token (a UUID), so every context merges them (a context skips only
    /// its own).
    public static let directInsertOrigin = "strata.direct-insert"

    /// Saves a request, all or nothing, with a context's answers whatever
    /// route it takes: the one entry point for saves described by value.
    ///
    /// - **Direct** (``SaveOutcome/Route/direct``): an unguarded save of at
    ///   most ``directInsertLimit`` new objects, each of an entity whose
    ///   plan inserts directly (see `EntityPlan`), with attribute values
    ///   only, into one writable store. Each object's values are checked,
    ///   its derived attributes computed and it is validated once, from the
    ///   entity's plan; validation problems throw what a context's save
    ///   throws (1570, 1610–1680; several: 1560). The store writes them in
    ///   one transaction (history under ``SaveRequest/author``), the row
    ///   cache keeps them and the change set is published.
    /// - **Context** (``SaveOutcome/Route/context``): everything else, and
    ///   a direct save the store refused for a uniqueness constraint (the
    ///   merge policy resolves it). A fresh context applies the request
    ///   (values already checked by the direct route are not checked
    ///   again) and saves it, streaming large inserts to the store
    ///   (``Context/save()``).
    ///
    /// Errors: two inserts with one ID, or an insert whose ID is not
    /// temporary, 1550; whatever `setValue(_:forKey:)`, `existingObject(with:)`
    /// (133000 for an object gone), `rebase` and a context's save throw.
    public func save(_ request: SaveRequest) async throws -> SaveOutcome {
        if request.inserts.count > 1, Set(request.inserts.lazy.map(\.id)).count < request.inserts.count {
            throw StrataError(.invalidValue, "two inserts of the save have the same ID")
        }
        if let insert = request.inserts.first(where: { !$0.id.isTemporary }) {
            throw StrataError(.invalidValue, "insert \(insert.id): a new object's ID must be temporary")
        }
        var prepared: [PropertyValues]?
        if request.saveGuards == nil, request.updates.isEmpty, request.deletes.isEmpty,
           !request.inserts.isEmpty, request.inserts.count <= Self.directInsertLimit {
            switch try await saveDirectly(request) {
            case .saved(let outcome): return outcome
            case .needsContext(let values): prepared = values
            }
        }
        let context = Context(coordinator: self, name: request.author, mergePolicy: request.mergePolicy, transactionAuthor: request.author,
                              saveGuards: request.saveGuards, readRestriction: request.readRestriction)
        let values = prepared
        return try await context.perform { context in try await context.save(request, prepared: values) }
    }

    /// Where a save the direct route took ended.
    private enum DirectSave {
        case saved(SaveOutcome)
        /// A context must save it; the inserts' checked values (defaults
        /// and derived values included), when every one could be checked.
        case needsContext(prepared: [PropertyValues]?)
    }

    /// The direct route of ``save(_:)``.
    private func saveDirectly(_ request: SaveRequest) async throws -> DirectSave {
        var changes = StoreChanges(checksVersions: request.mergePolicy != .overwrite, author: request.author, contextName: request.author)
        changes.inserts.reserveCapacity(request.inserts.count)
        var problems: [PropertyFailure] = []
        var plan: EntityPlan?
        var store: (any PersistentStore)?
        var oneStore = true
        for insert in request.inserts {
            if plan?.entity != insert.entity { plan = entityPlan(of: insert.entity) }
            guard let plan, let values = plan.directInsertValues(insert.values, id: insert.id, problems: &problems) else {
                return .needsContext(prepared: nil)
            }
            changes.inserts.append(StoreChanges.Insert(temporaryID: insert.id, values: values))
            if oneStore {
                let target = directInsertStore(for: insert)
                if let target, store == nil || store?.identifier == target.identifier {
                    store = target
                } else {
                    oneStore = false
                }
            }
        }
        // A context names the store problem (or saves into several stores)
        // before it validates.
        guard oneStore, let store else { return .needsContext(prepared: changes.inserts.map(\.values)) }
        guard problems.isEmpty else { throw StrataError.validation(problems) }

        let generation = rowCache.generation
        let result: StoreSaveResult
        do {
            result = try await store.save(changes)
        } catch {
            throw StrataError.storeFailure(error, in: store, committed: [])
        }
        guard case .committed(let commit) = result else { return .needsContext(prepared: changes.inserts.map(\.values)) }
        // The commit lists the permanent IDs in the order of the inserts;
        // a store that answered in another order is looked up.
        let insertedIDs: [ObjectID]
        if commit.temporaryIDs.count == changes.inserts.count, zip(commit.temporaryIDs, changes.inserts).allSatisfy({ $0 == $1.temporaryID }) {
            insertedIDs = commit.insertedIDs
        } else {
            let permanent = commit.permanentIDs
            insertedIDs = changes.inserts.map { permanent[$0.temporaryID] ?? $0.temporaryID }
        }
        var changeSet = ChangeSet(contextName: request.author, origin: Self.directInsertOrigin)
        changeSet.inserted = insertedIDs
        if rowCache.isEnabled {
            // As a context's save does: the rows as the store now holds them.
            let snapshots = zip(insertedIDs, changes.inserts).map { Snapshot(objectID: $0, version: 1, values: $1.values) }
            rowCache.store(snapshots, readAt: generation)
        }
        self.changes.publish(changeSet)
        return .saved(SaveOutcome(insertedIDs: insertedIDs, changes: changeSet, route: .direct))
    }

    /// The writable store an insert goes to, or nil when a context must
    /// choose or refuse.
    private func directInsertStore(for insert: SaveRequest.Insert) -> (any PersistentStore)? {
        let candidates = stores(for: insert.entity)
        let store: (any PersistentStore)?
        if let identifier = insert.storeIdentifier {
            store = candidates.first { $0.identifier == identifier }
        } else {
            store = candidates.count == 1 ? candidates.first : nil
        }
        guard let store, !store.isReadOnly else { return nil }
        return store
    }
}
