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
        var prepared: [PropertyValues]?
        guard let direct = try prepareDirect(request, prepared: &prepared) else { return try await saveInContext(request, prepared: prepared) }
        return try await writeDirect(direct, request)
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
        guard let finished = finishDirect(direct.changes.inserts, result: result, author: request.author) else {
            return try await saveInContext(request, prepared: direct.changes.inserts.map(\.values))
        }
        return try finished.get()
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
        // Optionals rather than enums with payloads, which are copied
        // out of the enum: a direct insert is unwrapped where it is.
        let direct: DirectInsert
        do {
            var prepared: [PropertyValues]?
            guard let ready = try prepareDirect(request, prepared: &prepared) else {
                return inTask(completion) { [prepared] in try await self.saveInContext(request, prepared: prepared) }
            }
            direct = ready
        } catch {
            return completion(.failure(error))
        }
        guard let store = direct.store as? any CompletionSavingStore else {
            return inTask(completion) { try await self.writeDirect(direct, request) }
        }
        // The closures keep the inserts, not the whole change set: each
        // part they keep is retained once more for every save.
        let inserts = direct.changes.inserts
        store.save(direct.changes) { result in
            finish {
                switch result {
                case .failure(let error):
                    completion(.failure(StrataError.storeFailure(error, in: store, committed: [])))
                case .success(let result):
                    if let finished = self.finishDirect(inserts, result: result, author: request.author) {
                        completion(finished)
                    } else {
                        let prepared = inserts.map(\.values)
                        self.inTask(completion) { try await self.saveInContext(request, prepared: prepared) }
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

    /// The direct route's first part, on the calling thread: the request's
    /// IDs checked, and, when the route can take it, each insert's values
    /// checked, derived and validated from its entity's plan (validation
    /// problems thrown as a context's save throws them). Nil when a context
    /// must save it; `prepared` then has the inserts' checked values
    /// (defaults and derived values included) when every one could be
    /// checked.
    private func prepareDirect(_ request: SaveRequest, prepared: inout [PropertyValues]?) throws -> DirectInsert? {
        if request.inserts.count > 1, Set(request.inserts.lazy.map(\.id)).count < request.inserts.count {
            throw StrataError(.invalidValue, "two inserts of the save have the same ID")
        }
        if let insert = request.inserts.first(where: { !$0.id.isTemporary }) {
            throw StrataError(.invalidValue, "insert \(insert.id): a new object's ID must be temporary")
        }
        guard request.saveGuards == nil, request.updates.isEmpty, request.deletes.isEmpty,
              !request.inserts.isEmpty, request.inserts.count <= Self.directInsertLimit else { return nil }
        var changes = StoreChanges(checksVersions: request.mergePolicy != .overwrite, author: request.author, contextName: request.author)
        changes.inserts.reserveCapacity(request.inserts.count)
        var problems: [PropertyFailure] = []
        var plan: EntityPlan?
        var store: (any PersistentStore)?
        var oneStore = true
        // By index: iterating the inserts copies each one.
        for index in request.inserts.indices {
            let entity = request.inserts[index].entity
            if plan?.entity != entity { plan = entityPlan(of: entity) }
            guard let plan, let values = plan.directInsertValues(request.inserts[index].values, id: request.inserts[index].id, problems: &problems) else {
                return nil
            }
            changes.inserts.append(StoreChanges.Insert(temporaryID: request.inserts[index].id, values: values))
            if oneStore {
                let target = directInsertStore(for: request.inserts[index])
                if let target, store == nil || store?.identifier == target.identifier {
                    store = target
                } else {
                    oneStore = false
                }
            }
        }
        // A context names the store problem (or saves into several stores)
        // before it validates.
        guard oneStore, let store else {
            prepared = changes.inserts.map(\.values)
            return nil
        }
        guard problems.isEmpty else { throw StrataError.validation(problems) }
        return DirectInsert(changes: changes, store: store)
    }

    /// The direct route's last part, once the store answered for
    /// `inserts`: the change set is published. Nil when a context must
    /// save it (the store answered a uniqueness conflict). A result, not an
    /// outcome: wrapping an outcome bound by the caller copies it.
    private func finishDirect(_ inserts: [StoreChanges.Insert], result: StoreSaveResult, author: String?) -> Result<SaveOutcome, any Error>? {
        guard case .committed(let commit) = result else { return nil }
        // The commit lists the permanent IDs in the order of the inserts;
        // a store that answered in another order is looked up. By index:
        // iterating the inserts copies each one.
        let temporaryIDs = commit.temporaryIDs
        var inOrder = temporaryIDs.count == inserts.count
        for index in inserts.indices where inOrder && temporaryIDs[index] != inserts[index].temporaryID { inOrder = false }
        let insertedIDs: [ObjectID]
        if inOrder {
            insertedIDs = commit.insertedIDs
        } else {
            let permanent = commit.permanentIDs
            insertedIDs = inserts.map { permanent[$0.temporaryID] ?? $0.temporaryID }
        }
        let changeSet = ChangeSet(inserted: insertedIDs, contextName: author, origin: Self.directInsertOrigin)
        self.changes.publish(changeSet)
        return .success(SaveOutcome(insertedIDs: insertedIDs, changes: changeSet, route: .direct))
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
