import Foundation
import StrataModel
import StrataQuery
import StrataStore

extension Context {
    /// Saves every change: recomputes derived attributes, validates (1570,
    /// 1580/1590, 1610–1680; several → 1560), checks that no persisted
    /// relationship crosses stores (133010), detects version conflicts and
    /// resolves them by ``mergePolicy`` (133020 / 133021 under `.error`), then
    /// writes one transaction per store.
    ///
    /// When a store fails, the error names it; stores that committed before
    /// it keep their changes and the context keeps the rest. Returns what was
    /// committed, which is also published to the coordinator's change hub.
    @discardableResult
    public func save() async throws -> ChangeSet {
        // One save at a time: a second save while the first awaits a store
        // would plan the same inserts again.
        await acquireSaveLock()
        defer { releaseSaveLock() }
        // Inserted-then-deleted objects never reach a store.
        for object in graph.changedObjects where object.isInserted && object.isDeleted {
            graph.unregister(object.objectID)
        }
        guard hasChanges else { return ChangeSet(contextName: name, origin: token) }
        // A large save of new objects into one store is written while its
        // later chunks are prepared; nil: saved the usual way below.
        if let streamed = try await saveStreamingIfEligible() { return streamed }
        try await prepareForSave()

        var attempts = 0
        while true {
            attempts += 1
            let plan = try buildSavePlan()
            if plan.isEmpty { return ChangeSet(contextName: name, origin: token) }
            // One store checks the versions in its own save, atomically,
            // and answers the conflicts with their current snapshots (below):
            // checking first would read every updated object again. Several
            // stores are checked first, so that a conflict in one is found
            // before another commits.
            let conflicts = plan.units.count > 1 ? try await precheckVersions(plan) : []
            if !conflicts.isEmpty {
                try await resolve(conflicts)
                guard attempts < 4 else { throw conflictError(conflicts) }
                try await loadChangedLists()
                continue
            }
            var committed: [(StoreSaveUnit, StoreCommit)] = []
            var retry = false
            for unit in plan.units {
                let result: StoreSaveResult
                do {
                    result = try await unit.store.save(unit.changes)
                } catch {
                    let changes = finishSave(committed)
                    coordinator.changes.publish(changes)
                    throw StrataError.storeFailure(error, in: unit.store, committed: committed.map { $0.0.store.storeDescription.displayName })
                }
                switch result {
                case .committed(let commit):
                    committed.append((unit, commit))
                case .conflicts(let storeConflicts):
                    guard committed.isEmpty, attempts < 4 else {
                        let changes = finishSave(committed)
                        coordinator.changes.publish(changes)
                        throw partialCommit(conflictError(try records(for: storeConflicts)), committed: committed, failed: unit)
                    }
                    try await resolve(try records(for: storeConflicts))
                    retry = true
                case .constraintConflicts(let constraintConflicts):
                    guard committed.isEmpty, attempts < 4 else {
                        let changes = finishSave(committed)
                        coordinator.changes.publish(changes)
                        throw partialCommit(constraintError(constraintConflicts), committed: committed, failed: unit)
                    }
                    try await resolve(constraintConflicts)
                    retry = true
                }
                if retry { break }
            }
            if retry {
                try await loadChangedLists()
                continue
            }
            let changes = finishSave(committed)
            coordinator.changes.publish(changes)
            return changes
        }
    }

    /// A store's refusal after other stores of the same save committed:
    /// the message says which stores committed and which wrote nothing.
    private func partialCommit(_ error: StrataError, committed: [(StoreSaveUnit, StoreCommit)], failed: StoreSaveUnit) -> StrataError {
        guard !committed.isEmpty else { return error }
        var error = error
        let done = committed.map { $0.0.store.storeDescription.displayName }.joined(separator: ", ")
        error.message = error.message.replacingOccurrences(of: "; nothing was saved", with: "")
            + "; store \(failed.store.storeDescription.displayName) wrote nothing, but stores \(done) had already committed their part"
        return error
    }

    // MARK: Preparing

    /// Loads what saving needs, recomputes derived attributes and validates.
    func prepareForSave() async throws {
        // Faults with changes (e.g. inverse updates) need their version and values.
        try await load(graph.changedObjects.filter(\.isFault))
        try await loadChangedLists()
        try await recomputeDerivedAttributes()
        try await validateChanges()
    }

    /// To-many lists changed by deltas are written as whole lists: load their base.
    func loadChangedLists() async throws {
        for object in graph.changedObjects where !object.isDeleted {
            for (key, change) in object.toManyChanges {
                if case .delta = change { try await loadList(key, of: object) }
            }
        }
    }

    func recomputeDerivedAttributes() async throws {
        try await recomputeDerivedAttributes(of: graph.changedObjects)
    }

    /// Recomputes the derived attributes of `changed` (deleted objects skipped).
    func recomputeDerivedAttributes(of changed: [ManagedObject]) async throws {
        var byEntity: [String: [ManagedObject]] = [:]
        for object in changed where !object.isDeleted {
            byEntity[object.entityName, default: []].append(object)
        }
        let model = self.model
        for (entity, objects) in byEntity {
            guard let plan = entityPlan(of: entity) else { continue }
            for derivation in plan.derivations {
                let attribute = derivation.attribute
                let operand = try derivation.operand.get()
                // One compiled evaluator for all the entity's objects; what
                // it could not read is loaded and the batch evaluated again.
                let values = try await evaluateLoading { accessor in
                    let evaluator = try OperandEvaluator(operand, entity: entity, model: model, accessor: accessor)
                    return try objects.map { try evaluator.value(of: $0) }
                }
                // Inserted objects' values are read and written by slot.
                let layout = plan.layout
                for (object, raw) in zip(objects, values) {
                    let checked = try ObjectGraph.checked(EntityPlan.Derivation.converted(raw, to: attribute.type), for: attribute, entity: entity)
                    if attribute.isTransient {
                        object.transients[attribute.name] = checked
                    } else if let slot = derivation.slot, object.isInserted {
                        if (object.changes[attribute.name, slot: slot, in: layout.values] ?? .null) != checked {
                            object.changes[attribute.name, slot: slot, in: layout.values] = checked
                        }
                    } else if graph.currentValue(of: object, forKey: attribute.name) != checked {
                        graph.setRaw(object, attribute.name, checked)
                    }
                }
            }
        }
    }

    // MARK: Planning

    /// One store's share of a save.
    struct StoreSaveUnit {
        var store: any PersistentStore
        var changes: StoreChanges
        /// The inserted objects, in the order of `changes.inserts`, with
        /// their ``ManagedObject/changeGeneration`` when planned.
        var insertedObjects: [(object: ManagedObject, generation: UInt64)] = []
    }

    /// The per-store change sets of a save.
    struct SavePlan {
        var units: [StoreSaveUnit]
        var isEmpty: Bool { units.allSatisfy { $0.changes.isEmpty } }
    }

    func buildSavePlan() throws -> SavePlan {
        // Per store, in the order first met; objects of one store and one
        // entity usually come in runs, so the last store and entity are
        // remembered instead of hashing their names at every object.
        var storeIDs: [String] = []
        var storeIndex: [String: Int] = [:]
        var byStore: [StoreChanges] = []
        var insertedByStore: [[(object: ManagedObject, generation: UInt64)]] = []
        var lastStoreID: String?
        var lastIndex = 0
        var externalErrors: [String] = []
        let checksVersions = mergePolicy != .overwrite
        let changed = graph.changedObjects
        for object in changed {
            let storeID = object.storeIdentifier
            let unit: Int
            if let lastStoreID, lastStoreID == storeID {
                unit = lastIndex
            } else if let known = storeIndex[storeID] {
                unit = known
            } else {
                unit = byStore.count
                storeIndex[storeID] = unit
                storeIDs.append(storeID)
                byStore.append(StoreChanges(checksVersions: checksVersions, author: transactionAuthor, contextName: name))
                insertedByStore.append([])
                if storeIDs.count == 1 {
                    // Most saves write one store: size its lists once
                    // rather than growing them by copying.
                    byStore[unit].inserts.reserveCapacity(changed.count)
                    insertedByStore[unit].reserveCapacity(changed.count)
                }
            }
            lastStoreID = storeID
            lastIndex = unit
            if object.isDeleted {
                if !object.isInserted {
                    byStore[unit].deletes.append(.init(objectID: object.objectID, expectedVersion: object.version))
                }
                continue
            }
            var toMany: [String: [ObjectID]] = [:]
            var values: PropertyValues
            if object.isInserted {
                // The changes (which hold only persisted keys), shared as
                // they are, not copied: keys never set are absent, which
                // stores read as nil (and so does the object once they are
                // its committed values).
                values = object.changes
            } else {
                values = PropertyValues(layout: object.changes.layout)
                for (key, _) in object.changes {
                    if let value = graph.currentValue(of: object, forKey: key) { values[key] = value }
                }
            }
            for key in object.toManyChanges.keys {
                guard let list = graph.currentList(of: object, forKey: key) else {
                    throw StrataError(.storeSave, "'\(object.entityName).\(key)' of \(object.objectID) changed but its stored list could not be loaded; nothing was saved")
                }
                toMany[key] = list
            }
            // Only entities with relationships or ID-holding attributes
            // can name objects of another store.
            if graph.layout(of: object).holdsObjectIDs, referencesOtherObjects(values, toMany) {
                externalErrors += crossStoreProblems(object, values: values, toMany: toMany)
            }
            if object.isInserted {
                byStore[unit].inserts.append(.init(temporaryID: object.objectID, values: values, toMany: toMany))
                insertedByStore[unit].append((object, object.changeGeneration))
            } else {
                byStore[unit].updates.append(.init(objectID: object.objectID, expectedVersion: object.version, values: values, toMany: toMany))
            }
        }
        guard externalErrors.isEmpty else {
            throw StrataError(.externalRelationship, "\(externalErrors.count) persisted relationship(s) point to objects in another store; link stores with fetched properties or transient relationships", details: externalErrors)
        }
        var units: [StoreSaveUnit] = []
        for unit in storeIDs.indices.sorted(by: { storeIDs[$0] < storeIDs[$1] }) where !byStore[unit].isEmpty {
            let identifier = storeIDs[unit]
            var changes = byStore[unit]
            if let saveGuards { changes.guards = try saveGuards(changes) }
            guard let store = coordinator.store(identifier: identifier) else {
                throw StrataError(.storeSave, "no loaded store has identifier \(identifier)")
            }
            guard !store.isReadOnly else {
                throw StrataError(.storeSave, "store \(store.storeDescription.displayName) is read-only: \(changes.inserts.count) insert(s), \(changes.updates.count) update(s), \(changes.deletes.count) delete(s) refused; nothing was written")
            }
            units.append(StoreSaveUnit(store: store, changes: changes, insertedObjects: insertedByStore[unit]))
        }
        return SavePlan(units: units)
    }

    /// Whether values or lists name any object (only those can cross stores).
    private func referencesOtherObjects(_ values: PropertyValues, _ toMany: [String: [ObjectID]]) -> Bool {
        if !toMany.isEmpty { return true }
        for (_, value) in values {
            if case .object = value { return true }
        }
        return false
    }

    private func crossStoreProblems(_ object: ManagedObject, values: PropertyValues, toMany: [String: [ObjectID]]) -> [String] {
        var problems: [String] = []
        func check(_ key: String, _ id: ObjectID) {
            guard let relationship = model.relationship(named: key, in: object.entityName), !relationship.isTransient else { return }
            let destinationStore = graph.registeredObject(for: id)?.storeIdentifier ?? id.storeIdentifier
            if destinationStore != object.storeIdentifier {
                problems.append("\(object.entityName).\(key) of \(object.objectID) → \(id) (another store)")
            }
        }
        for (key, value) in values { if case .object(let id) = value { check(key, id) } }
        for (key, ids) in toMany { for id in ids { check(key, id) } }
        return problems
    }

    // MARK: Conflicts

    /// Compares the expected versions with the stores' before writing (a
    /// save that writes to several stores: one store's save checks them
    /// itself).
    func precheckVersions(_ plan: SavePlan) async throws -> [ConflictRecord] {
        guard mergePolicy != .overwrite else { return [] }
        var records: [ConflictRecord] = []
        for unit in plan.units {
            let expected = Dictionary(
                unit.changes.updates.map { ($0.objectID, $0.expectedVersion) } + unit.changes.deletes.map { ($0.objectID, $0.expectedVersion) },
                uniquingKeysWith: { a, _ in a })
            guard !expected.isEmpty else { continue }
            let snapshots = try await unit.store.snapshots(for: Array(expected.keys))
            let current = Dictionary(snapshots.map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
            for (id, version) in expected {
                let snapshot = current[id]
                if snapshot?.version != version {
                    records.append(record(for: id, expected: version, current: snapshot))
                }
            }
        }
        return records.sorted { $0.objectID.uriRepresentation < $1.objectID.uriRepresentation }
    }

    /// A store's conflicts as records, in the order ``precheckVersions(_:)``
    /// gives them (by URI).
    func records(for conflicts: [StoreConflict]) throws -> [ConflictRecord] {
        conflicts.map { record(for: $0.objectID, expected: $0.expectedVersion, current: $0.currentSnapshot) }
            .sorted { $0.objectID.uriRepresentation < $1.objectID.uriRepresentation }
    }

    private func record(for id: ObjectID, expected: Int64, current: Snapshot?) -> ConflictRecord {
        let object = graph.registeredObject(for: id)
        return ConflictRecord(
            objectID: id,
            expectedVersion: expected,
            currentVersion: current?.version ?? 0,
            cachedValues: object?.committedValues ?? [:],
            persistedValues: current?.values.dictionary,
            localChanges: object?.changes.dictionary ?? [:]
        )
    }

    func conflictError(_ conflicts: [ConflictRecord]) -> StrataError {
        StrataError(.mergeConflict, "\(conflicts.count) object(s) changed in the store since they were read; nothing was saved (merge policy: \(mergePolicy.rawValue))", details: conflicts.map(\.description), conflicts: conflicts)
    }

    func constraintError(_ conflicts: [ConstraintConflict]) -> StrataError {
        StrataError(.constraintConflict, "\(conflicts.count) uniqueness constraint conflict(s); nothing was saved", details: conflicts.map { conflict in
            let values = conflict.constraint.map { "\($0)=\(conflict.values[$0] ?? .null)" }.joined(separator: ", ")
            return "\(conflict.entityName) (\(conflict.constraint.joined(separator: ", "))): \(values) already used by \(conflict.existingObjectID?.uriRepresentation ?? "another object in this save")"
        })
    }

    /// Applies the merge policy to version conflicts (or throws under `.error`).
    func resolve(_ conflicts: [ConflictRecord]) async throws {
        guard mergePolicy != .error else { throw conflictError(conflicts) }
        for conflict in conflicts {
            guard let object = graph.registeredObject(for: conflict.objectID) else { continue }
            guard let persisted = conflict.persistedValues else {
                // Deleted in the store meanwhile: the store's state wins under
                // every policy (there is nothing left to update).
                graph.unregister(object.objectID)
                vanished.insert(object.objectID)
                graph.dropReferences(to: [object.objectID])
                continue
            }
            let cached = object.committedValues
            object.committed = PropertyValues(persisted)
            object.version = conflict.currentVersion
            object.committedToMany.removeAll()
            switch mergePolicy {
            case .error:
                break
            case .mergeByPropertyStoreTrump:
                let storeChanged = Set(persisted.keys).union(cached.keys).filter { (persisted[$0] ?? .null) != (cached[$0] ?? .null) }
                for key in storeChanged { object.changes[key] = nil }
                if object.isDeleted, !storeChanged.isEmpty { object.isDeleted = false }
            case .mergeByPropertyObjectTrump:
                break
            case .overwrite:
                for (key, value) in cached where object.changes[key] == nil && (persisted[key] ?? .null) != value {
                    object.changes[key] = value
                }
            case .rollback:
                object.changes.removeAll()
                object.toManyChanges.removeAll()
                object.isDeleted = false
            }
            for (key, value) in object.changes where (persisted[key] ?? .null) == value { object.changes[key] = nil }
        }
    }

    /// Resolves uniqueness conflicts: under mergeByPropertyObjectTrump (and
    /// overwrite) the insert becomes an update of the existing object
    /// (upsert); under store trump and rollback the existing object wins and
    /// the insert is dropped in its favour; under `.error` the save fails.
    func resolve(_ conflicts: [ConstraintConflict]) async throws {
        // A context with guards (access rules) does not merge an insert
        // into the object holding its values: that object may be one the
        // caller may not read or create.
        guard mergePolicy != .error, saveGuards == nil, conflicts.allSatisfy({ $0.existingObjectID != nil }) else {
            throw constraintError(conflicts)
        }
        for conflict in conflicts {
            guard let existingID = conflict.existingObjectID,
                  let object = graph.registeredObject(for: conflict.objectID), object.isInserted else {
                throw constraintError(conflicts)
            }
            let store = try coordinator.store(for: existingID)
            guard let snapshot = try await store.snapshots(for: [existingID]).first else {
                throw constraintError(conflicts)
            }
            let pending = object.changes
            let pendingToMany = object.toManyChanges
            let temporaryID = object.objectID
            if let existing = graph.registeredObject(for: existingID), existing !== object {
                graph.unregister(existingID)
            }
            graph.changeID(of: object, to: existingID)
            object.isInserted = false
            object.committed = snapshot.values
            object.version = snapshot.version
            object.changes = [:]
            object.toManyChanges = [:]
            if mergePolicy == .mergeByPropertyObjectTrump || mergePolicy == .overwrite {
                for (key, value) in pending where (snapshot.values[key] ?? .null) != value { object.changes[key] = value }
                object.toManyChanges = pendingToMany
            }
            replaceReferences([temporaryID: existingID])
        }
    }

    // MARK: Finishing

    /// Applies committed stores' results to the objects and builds the change set.
    func finishSave(_ committed: [(StoreSaveUnit, StoreCommit)]) -> ChangeSet {
        var changeSet = ChangeSet(contextName: name, origin: token)
        var rekeyed: [(ManagedObject, ObjectID)] = []
        // Sized once: growing these by rehashing costs more than filling them.
        let insertCount = committed.reduce(0) { $0 + $1.0.changes.inserts.count }
        let updateCount = committed.reduce(0) { $0 + $1.0.changes.updates.count }
        rekeyed.reserveCapacity(insertCount)
        changeSet.inserted.reserveCapacity(insertCount)
        changeSet.versions.reserveCapacity(updateCount)
        for (unit, commit) in committed {
            // The commit lists the permanent IDs in the order of the
            // inserts; a store that answered in another order is looked up.
            let inOrder = commit.temporaryIDs.count == unit.changes.inserts.count
            var byTemporaryID: [ObjectID: ObjectID]?
            for (index, insert) in unit.changes.inserts.enumerated() {
                let planned = index < unit.insertedObjects.count ? unit.insertedObjects[index] : nil
                // The planned object when it still holds the ID (no lookup),
                // else whatever the registry has under it.
                let object: ManagedObject
                if let planned, planned.object.isRegistered, planned.object.objectID == insert.temporaryID {
                    object = planned.object
                } else if let registered = graph.registeredObject(for: insert.temporaryID) {
                    object = registered
                } else {
                    continue
                }
                let permanent: ObjectID
                if inOrder, commit.temporaryIDs[index] == insert.temporaryID {
                    permanent = commit.insertedIDs[index]
                } else {
                    if byTemporaryID == nil { byTemporaryID = commit.permanentIDs }
                    permanent = byTemporaryID?[insert.temporaryID] ?? insert.temporaryID
                }
                // Absent keys read as nil (committedValues lists them).
                object.committed = insert.values
                // Inserted objects start at version 1 (the store contract).
                object.version = 1
                if let planned, planned.object === object, planned.generation == object.changeGeneration {
                    // Not edited since the plan: the insert carries every
                    // change and every changed list, now all committed.
                    if !object.changes.isEmpty { object.changes = [:] }
                    if !object.toManyChanges.isEmpty { object.toManyChanges = [:] }
                } else {
                    // Keep edits made while the save awaited the store.
                    for (key, value) in insert.values where object.changes[key] == value { object.changes[key] = nil }
                    for key in Array(object.changes.keys) where insert.values[key] == nil && object.changes[key] == .null { object.changes[key] = nil }
                    for (key, list) in insert.toMany where graph.currentList(of: object, forKey: key) == list { object.toManyChanges[key] = nil }
                }
                object.committedToMany = insert.toMany
                object.isInserted = false
                graph.unenrollSaved(object)
                rekeyed.append((object, permanent))
                changeSet.inserted.append(permanent)
            }
            for update in unit.changes.updates {
                guard let object = graph.registeredObject(for: update.objectID) else { continue }
                if let before = object.committed { changeSet.previousValues[update.objectID] = before }
                var values = object.committed ?? [:]
                values.merge(update.values) { _, new in new }
                object.committed = values
                object.version = commit.updatedVersions[update.objectID] ?? object.version + 1
                // Keep edits made while the save awaited the store.
                for (key, value) in update.values where object.changes[key] == value { object.changes[key] = nil }
                for (key, list) in update.toMany {
                    if graph.currentList(of: object, forKey: key) == list { object.toManyChanges[key] = nil }
                    object.committedToMany[key] = list
                }
                changeSet.updated[update.objectID] = Set(update.values.keys).union(update.toMany.keys)
                changeSet.versions[update.objectID] = object.version
                graph.unenrollSaved(object)
            }
            for delete in unit.changes.deletes {
                if let before = graph.registeredObject(for: delete.objectID)?.committed { changeSet.previousValues[delete.objectID] = before }
                graph.unregister(delete.objectID)
                changeSet.deleted.append(delete.objectID)
            }
        }
        // Before any other write (see unenrollSaved): the saved objects
        // leave the list of changed objects, the whole list at once after
        // a save of every change.
        graph.finishUnenrolling()
        // Inserted-then-deleted objects of the saved stores never reach them.
        let savedStores = Set(committed.map { $0.0.store.identifier })
        for object in graph.changedObjects where object.isDeleted && object.isInserted && savedStores.contains(object.storeIdentifier) {
            graph.unregister(object.objectID)
        }
        graph.changeIDs(rekeyed)
        if committed.contains(where: { !$0.1.insertedIDs.isEmpty }) {
            // Built only if some object holds a temporary ID.
            replaceReferences(temporaryIDs: {
                var map: [ObjectID: ObjectID] = [:]
                map.reserveCapacity(committed.reduce(0) { $0 + $1.1.insertedIDs.count })
                for (_, commit) in committed {
                    for (temporary, permanent) in zip(commit.temporaryIDs, commit.insertedIDs) { map[temporary] = permanent }
                }
                return map
            })
        }
        return changeSet
    }

    /// Rewrites every reference to the temporary IDs `map` names (after a
    /// save, or an insert turned into an update) in registered objects'
    /// values and lists.
    func replaceReferences(_ map: [ObjectID: ObjectID]) {
        replaceReferences(temporaryIDs: { map })
    }

    /// ``replaceReferences(_:)`` with a map of temporary IDs that is made
    /// only when some registered object refers to a temporary ID (most
    /// saves insert objects nothing else points to yet).
    func replaceReferences(temporaryIDs makeMap: () -> [ObjectID: ObjectID]) {
        var built: [ObjectID: ObjectID]?
        func map(_ id: ObjectID) -> ObjectID? {
            guard id.isTemporary else { return nil }
            if built == nil { built = makeMap() }
            return built?[id]
        }
        replaceReferences(lookup: map)
    }

    private func replaceReferences(lookup: (ObjectID) -> ObjectID?) {
        func needsFix(_ value: PropertyValue) -> Bool {
            switch value {
            case .object(let id): return lookup(id) != nil
            case .objects(let ids): return ids.contains { lookup($0) != nil }
            default: return false
            }
        }
        func fix(_ value: PropertyValue) -> PropertyValue {
            switch value {
            case .object(let id): return .object(lookup(id) ?? id)
            case .objects(let ids): return .objects(ids.map { lookup($0) ?? $0 })
            default: return value
            }
        }
        // Only touch what holds an old ID: rewriting every dictionary would
        // copy them all. Committed values are only looked at under the keys
        // that can hold an ID (the entity's reference keys); objects of an
        // entity with none hold IDs only in fetched results.
        for object in graph.referenceHolders {
            for (key, ids) in object.fetchedCache where ids.contains(where: { lookup($0) != nil }) {
                object.fetchedCache[key] = ids.map { lookup($0) ?? $0 }
            }
            let keys = graph.layout(of: object).referenceKeys
            guard !keys.isEmpty else { continue }
            if !object.changes.isEmpty {
                for (key, value) in object.changes where needsFix(value) { object.changes[key] = fix(value) }
            }
            if let committed = object.committed, keys.contains(where: { committed[$0].map(needsFix) ?? false }) {
                var fixed = committed
                for (key, value) in committed where needsFix(value) { fixed[key] = fix(value) }
                object.committed = fixed
            }
            for (key, value) in object.transients where needsFix(value) { object.transients[key] = fix(value) }
            for (key, list) in object.committedToMany where list.contains(where: { lookup($0) != nil }) {
                object.committedToMany[key] = list.map { lookup($0) ?? $0 }
            }
            for (key, change) in object.toManyChanges {
                switch change {
                case .replaced(let list) where list.contains(where: { lookup($0) != nil }):
                    object.toManyChanges[key] = .replaced(list.map { lookup($0) ?? $0 })
                case .delta(let added, let removed) where added.contains(where: { lookup($0) != nil }) || removed.contains(where: { lookup($0) != nil }):
                    object.toManyChanges[key] = .delta(added: added.map { lookup($0) ?? $0 }, removed: Set(removed.map { lookup($0) ?? $0 }))
                default:
                    break
                }
            }
        }
    }
}
