import StrataModel
import StrataStore

extension Coordinator {
    /// The most objects a save writes without a context: past this, the
    /// cost of a context is spread over enough objects not to matter (and
    /// a context streams large saves to the store).
    public static let directInsertLimit = 256

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
    ///   one transaction (history under ``SaveRequest/author``) and the
    ///   change set is published.
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
        switch try prepareDirect(request) {
        case .ready(let direct): return try await writeDirect(direct, request)
        case .needsContext(let values): return try await saveInContext(request, prepared: values)
        }
    }

    /// The direct route's write, awaited: the store saves the checked
    /// inserts; a uniqueness conflict goes on to a context with them.
    private func writeDirect(_ direct: DirectInsert, _ request: SaveRequest) async throws -> SaveOutcome {
        let result: StoreSaveResult
        do {
            result = try await direct.store.save(direct.changes)
        } catch {
            throw StrataError.storeFailure(error, in: direct.store, committed: [])
        }
        switch finishDirect(direct, result: result, author: request.author) {
        case .saved(let outcome): return outcome
        case .needsContext(let values): return try await saveInContext(request, prepared: values)
        }
    }

    /// ``save(_:)`` answered through `completion` (called exactly once),
    /// for callers that are not tasks: a save the direct route takes into
    /// a store that takes completion handlers (``CompletionSavingStore``)
    /// is checked on the calling thread, written by the store's writer and
    /// finished (change set published, `completion`) in whatever
    /// `finish` runs it on, with no task: the writer only hands it over,
    /// so that publishing to many subscribers never holds up the next
    /// commit. Every other save, and one the direct route hands on to a
    /// context, runs in a task of its own. The route, checks, answers and
    /// errors are ``save(_:)``'s.
    ///
    /// `completion` runs where `finish` runs it, in a task, or (for a save
    /// refused before anything is written) on the calling thread. `finish`
    /// is called on the store's writer thread (or, for a save the store
    /// answers at once, on the calling thread), must not block (an event
    /// loop's `execute`) and must run what it is given: it is the save's
    /// only way to its completion.
    ///
    /// A direct insert's change set is published where `finish` runs it,
    /// after its commit: subscribers may hear of a later commit first.
    public func save(_ request: SaveRequest, finish: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                     completion: @escaping @Sendable (Result<SaveOutcome, any Error>) -> Void) {
        let direct: DirectInsert
        do {
            switch try prepareDirect(request) {
            case .ready(let ready):
                direct = ready
            case .needsContext(let values):
                return inTask(completion) { try await self.saveInContext(request, prepared: values) }
            }
        } catch {
            return completion(.failure(error))
        }
        guard let store = direct.store as? any CompletionSavingStore else {
            return inTask(completion) { try await self.writeDirect(direct, request) }
        }
        store.save(direct.changes) { result in
            finish {
                switch result {
                case .failure(let error):
                    completion(.failure(StrataError.storeFailure(error, in: direct.store, committed: [])))
                case .success(let result):
                    switch self.finishDirect(direct, result: result, author: request.author) {
                    case .saved(let outcome):
                        completion(.success(outcome))
                    case .needsContext(let values):
                        self.inTask(completion) { try await self.saveInContext(request, prepared: values) }
                    }
                }
            }
        }
    }

    /// Runs `body` in a task of its own and hands its result to `completion`.
    private func inTask(_ completion: @escaping @Sendable (Result<SaveOutcome, any Error>) -> Void, _ body: @escaping @Sendable () async throws -> SaveOutcome) {
        Task {
            do {
                completion(.success(try await body()))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// The context route: a fresh context applies the request (with the
    /// values the direct route already checked, when it did) and saves it.
    private func saveInContext(_ request: SaveRequest, prepared: [PropertyValues]?) async throws -> SaveOutcome {
        let context = Context(coordinator: self, name: request.author, mergePolicy: request.mergePolicy, transactionAuthor: request.author,
                              saveGuards: request.saveGuards, readRestriction: request.readRestriction)
        return try await context.perform { context in try await context.save(request, prepared: prepared) }
    }

    /// A save the direct route writes: its change set and its store.
    private struct DirectInsert: Sendable {
        let changes: StoreChanges
        let store: any PersistentStore
    }

    /// Where the direct route's first part left a save.
    private enum DirectPlan {
        /// Checked and ready to write.
        case ready(DirectInsert)
        /// A context must save it; the inserts' checked values (defaults
        /// and derived values included), when every one could be checked.
        case needsContext(prepared: [PropertyValues]?)
    }

    /// Where a save the direct route wrote ended.
    private enum DirectSave {
        case saved(SaveOutcome)
        /// A context must save it (the store answered a uniqueness
        /// conflict), with the inserts' checked values.
        case needsContext(prepared: [PropertyValues]?)
    }

    /// The direct route's first part, on the calling thread: the request's
    /// IDs checked, and, when the route can take it, each insert's values
    /// checked, derived and validated from its entity's plan (validation
    /// problems thrown as a context's save throws them).
    private func prepareDirect(_ request: SaveRequest) throws -> DirectPlan {
        if request.inserts.count > 1, Set(request.inserts.lazy.map(\.id)).count < request.inserts.count {
            throw StrataError(.invalidValue, "two inserts of the save have the same ID")
        }
        if let insert = request.inserts.first(where: { !$0.id.isTemporary }) {
            throw StrataError(.invalidValue, "insert \(insert.id): a new object's ID must be temporary")
        }
        guard request.saveGuards == nil, request.updates.isEmpty, request.deletes.isEmpty,
              !request.inserts.isEmpty, request.inserts.count <= Self.directInsertLimit else { return .needsContext(prepared: nil) }
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
        return .ready(DirectInsert(changes: changes, store: store))
    }

    /// The direct route's last part, once the store answered: the change
    /// set is published.
    private func finishDirect(_ direct: DirectInsert, result: StoreSaveResult, author: String?) -> DirectSave {
        let changes = direct.changes
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
        var changeSet = ChangeSet(contextName: author, origin: Self.directInsertOrigin)
        changeSet.inserted = insertedIDs
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
        guard let store, readOnlyStores.isEmpty || !store.isReadOnly else { return nil }
        return store
    }
}
