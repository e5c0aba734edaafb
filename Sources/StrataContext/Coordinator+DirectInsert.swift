import Foundation
import StrataModel
import StrataQuery
import StrataStore

extension Coordinator {
    /// The most objects one direct insert takes: past this, the cost of a
    /// context is spread over enough objects not to matter (and a context
    /// streams large saves to the store).
    public static let directInsertLimit = Context.rowCacheWriteThroughLimit

    /// Inserts new objects straight into their store, without a context:
    /// what a fresh context would save for them, for a fraction of its
    /// work. A server's insert requests take this path.
    ///
    /// The objects get what a context's save gives them: their entity's
    /// default values, the values set (checked and converted as
    /// `setValue(_:forKey:)` does), their derived attributes, then
    /// validation; the store writes them in one transaction (with
    /// history, under `author` and `contextName`), the row cache keeps
    /// them, and the change set is published to ``changes``.
    ///
    /// Answers nil, having written nothing, whenever a context is needed
    /// to save them or to say why it cannot:
    /// - an entity that does not qualify (see ``DirectInsertPlan``: a
    ///   mandatory relationship, a derivation through a relationship…), or
    ///   that is unknown or abstract;
    /// - a value for a relationship, a transient attribute or an unknown
    ///   name, or one of the wrong kind;
    /// - any validation problem;
    /// - no store, several stores (or none named) for an entity, objects
    ///   for two stores, a read-only store;
    /// - a uniqueness constraint broken (a context resolves it by its merge
    ///   policy);
    /// - more than ``directInsertLimit`` objects, or none.
    ///
    /// A store that fails throws what a context's save throws (the store
    /// named; nothing was written).
    public func insertDirectly(_ inserts: [DirectInsert], author: String?, contextName: String?, checksVersions: Bool = true) async throws -> DirectInsertResult? {
        guard !inserts.isEmpty, inserts.count <= Self.directInsertLimit else { return nil }
        var store: (any PersistentStore)?
        var changes = StoreChanges(checksVersions: checksVersions, author: author, contextName: contextName)
        changes.inserts.reserveCapacity(inserts.count)
        var plan: DirectInsertPlan?
        for insert in inserts {
            if plan?.entity != insert.entity {
                plan = directInsertPlan(of: insert.entity)
            }
            guard let plan, let template = plan.template else { return nil }
            guard let target = directInsertStore(for: insert), store == nil || store?.identifier == target.identifier else { return nil }
            store = target
            let layout = template.layout
            var values = template.defaults
            for (key, value) in insert.values {
                guard let attribute = layout.attribute(named: key), !attribute.isTransient, let slot = attribute.slot,
                      let checked = try? ObjectGraph.checked(value, type: attribute.type, name: key, entity: insert.entity) else { return nil }
                values[key, slot: slot, in: layout.values] = checked
            }
            let temporaryID = ObjectID.temporary(entityName: insert.entity)
            guard let derived = plan.derived(values, id: temporaryID, layout: layout.values) else { return nil }
            values = derived
            guard Context.admitsInsert(plan.validation, values: values) else { return nil }
            changes.inserts.append(StoreChanges.Insert(temporaryID: temporaryID, values: values))
        }
        guard let store else { return nil }

        let generation = rowCache.generation
        let result: StoreSaveResult
        do {
            result = try await store.save(changes)
        } catch {
            throw Context.storeFailure(error, in: store, committed: [])
        }
        guard case .committed(let commit) = result else { return nil }
        // The commit lists the permanent IDs in the order of the inserts;
        // a store that answered in another order is looked up.
        let insertedIDs: [ObjectID]
        if commit.temporaryIDs.count == changes.inserts.count, zip(commit.temporaryIDs, changes.inserts).allSatisfy({ $0 == $1.temporaryID }) {
            insertedIDs = commit.insertedIDs
        } else {
            let permanent = commit.permanentIDs
            insertedIDs = changes.inserts.map { permanent[$0.temporaryID] ?? $0.temporaryID }
        }
        var changeSet = ChangeSet(contextName: contextName, origin: Self.directInsertOrigin)
        changeSet.inserted = insertedIDs
        if rowCache.isEnabled {
            // As a context's save does: the rows as the store now holds them.
            let snapshots = zip(insertedIDs, changes.inserts).map { Snapshot(objectID: $0, version: 1, values: $1.values) }
            rowCache.store(snapshots, readAt: generation)
        }
        self.changes.publish(changeSet)
        return DirectInsertResult(insertedIDs: insertedIDs, changes: changeSet)
    }

    /// The origin of direct inserts' change sets: no context's token (a
    /// UUID), so every context merges them (a context skips only its own).
    public static let directInsertOrigin = "strata.direct-insert"

    /// The entity's direct insert plan, made once; nil for a name the
    /// model does not have (names come from clients: only the model's own
    /// are kept in the coordinator's caches).
    func directInsertPlan(of entity: String) -> DirectInsertPlan? {
        guard model.entity(named: entity) != nil else { return nil }
        return directInsertPlans.value(for: entity) { DirectInsertPlan(entity: entity, coordinator: self) }
    }

    /// The writable store an insert goes to, or nil when a context must choose or refuse.
    private func directInsertStore(for insert: DirectInsert) -> (any PersistentStore)? {
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
