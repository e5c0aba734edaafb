import StrataModel

extension MemoryStorage {
    /// Saves a change set, all or nothing: checks versions (when asked),
    /// IDs, values and uniqueness constraints first, then applies it.
    ///
    /// Conflicts are answers (nothing changes); a change set that breaks
    /// the contract (an invalid value, an unknown property, a reference to
    /// an object that does not exist or lives in another store) throws,
    /// and nothing changes either. Transient properties are ignored.
    mutating func save(_ changes: StoreChanges) throws(StrataError) -> StoreSaveResult {
        // Planning reads a copy of the storage; it is released before
        // applying, so that applying mutates in place (no copy-on-write).
        switch try plan(changes) {
        case .refused(let result):
            return result
        case .ready(let plan):
            guard !changes.guards.isEmpty else {
                apply(plan)
                return .committed(plan.commit)
            }
            // Guards see the rows before the save, then the rows as the
            // save leaves them, on a copy kept only when every guard holds.
            try check(changes.guards, phase: .before) { $0 }
            var next = self
            next.apply(plan)
            try next.check(changes.guards, phase: .after) { plan.permanentIDs[$0] ?? $0 }
            self = next
            return .committed(plan.commit)
        }
    }

    /// Fails with the first guard of `phase` that some of its objects
    /// violate; `permanent` maps the change set's IDs to the stored ones.
    func check(_ guards: [StoreGuard], phase: StoreGuard.Phase, permanent: (ObjectID) -> ObjectID) throws(StrataError) {
        for guarded in guards where guarded.phase == phase && !guarded.objectIDs.isEmpty {
            if try count(guarded.violations(among: guarded.objectIDs.map(permanent))) > 0 {
                throw guarded.denial
            }
        }
    }

    /// What checking a change set decides.
    enum PlanOutcome {
        /// Nothing may be written: conflicts.
        case refused(StoreSaveResult)
        /// Everything checked: apply it.
        case ready(MemorySavePlan)
    }

    /// Checks a change set and plans it, without changing anything.
    func plan(_ changes: StoreChanges) throws(StrataError) -> PlanOutcome {
        var plan = MemorySavePlan()
        var conflicts: [StoreConflict] = []
        var conflicted: Set<ObjectID> = []

        func conflict(_ id: ObjectID, expected: Int64, current: (root: String, primaryKey: Int64, row: StoredRow)?) {
            guard conflicted.insert(id).inserted else { return }
            conflicts.append(StoreConflict(
                objectID: id,
                expectedVersion: expected,
                currentVersion: current?.row.version ?? 0,
                currentSnapshot: current.map { snapshot(of: MemoryRowReference(primaryKey: $0.primaryKey, row: $0.row)) }
            ))
        }

        // Inserts: permanent IDs.
        for insert in changes.inserts {
            let id = insert.temporaryID
            guard id.isTemporary else {
                throw StrataError(.invalidValue, "insert of \(id): an inserted object must have a temporary ID")
            }
            try requireHeld(id, action: "insert")
            if model.entity(named: id.entityName)?.isAbstract == true {
                throw StrataError(.invalidValue, "insert of \(id): entity '\(id.entityName)' is abstract")
            }
            guard plan.permanentIDs[id] == nil else {
                throw StrataError(.invalidValue, "insert of \(id): the object is inserted twice")
            }
            let root = model.rootEntityName(of: id.entityName)
            let (key, overflow) = (plan.lastPrimaryKeys[root] ?? tables[root]?.lastPrimaryKey ?? 0).addingReportingOverflow(1)
            guard !overflow else {
                throw StrataError(.storeSave, "store \(identifier): the primary keys of '\(root)' are exhausted")
            }
            plan.lastPrimaryKeys[root] = key
            plan.permanentIDs[id] = objectID(entity: id.entityName, primaryKey: key)
        }

        // Deletes and updates: versions.
        var removed: Set<MemorySavePlan.Removal> = []
        for delete in changes.deletes {
            try requirePermanent(delete.objectID, action: "delete")
            if let found = row(for: delete.objectID) {
                if changes.checksVersions, found.row.version != delete.expectedVersion {
                    conflict(delete.objectID, expected: delete.expectedVersion, current: found)
                }
                let removal = MemorySavePlan.Removal(root: found.root, primaryKey: found.primaryKey)
                if removed.insert(removal).inserted { plan.deletes.append(removal) }
            } else if changes.checksVersions {
                conflict(delete.objectID, expected: delete.expectedVersion, current: nil)
            }
        }
        var updated: Set<ObjectID> = []
        var updateRows: [(update: StoreChanges.Update, root: String, primaryKey: Int64, row: StoredRow)] = []
        for update in changes.updates {
            try requirePermanent(update.objectID, action: "update")
            guard updated.insert(update.objectID).inserted else {
                throw StrataError(.invalidValue, "update of \(update.objectID): the object is updated twice in one save")
            }
            if let found = row(for: update.objectID) {
                if changes.checksVersions, found.row.version != update.expectedVersion {
                    conflict(update.objectID, expected: update.expectedVersion, current: found)
                }
                updateRows.append((update, found.root, found.primaryKey, found.row))
            } else if changes.checksVersions {
                conflict(update.objectID, expected: update.expectedVersion, current: nil)
            }
        }
        guard conflicts.isEmpty else { return .refused(.conflicts(conflicts)) }

        // Values and references.
        let resolver = MemoryReferenceResolver(storage: self, permanentIDs: plan.permanentIDs, removed: removed)
        for insert in changes.inserts {
            guard let permanent = plan.permanentIDs[insert.temporaryID], let key = permanent.primaryKey else { continue }
            var write = MemorySavePlan.Write(
                objectID: insert.temporaryID, permanentID: permanent, root: model.rootEntityName(of: permanent.entityName),
                primaryKey: key, version: 1, attributes: [], toOnes: [], toMany: []
            )
            try normalize(insert.values, insert.toMany, into: &write, resolver: resolver)
            plan.inserts.append(write)
        }
        // Updates of objects gone while versions are not checked do nothing.
        for found in updateRows {
            let update = found.update
            let (version, overflow) = found.row.version.addingReportingOverflow(1)
            guard !overflow else {
                throw StrataError(.storeSave, "update of \(update.objectID): the version cannot grow past \(found.row.version)")
            }
            var write = MemorySavePlan.Write(
                objectID: update.objectID, permanentID: objectID(entity: found.row.entityName, primaryKey: found.primaryKey), root: found.root,
                primaryKey: found.primaryKey, version: version, attributes: [], toOnes: [], toMany: []
            )
            try normalize(update.values, update.toMany, into: &write, resolver: resolver)
            plan.updates.append(write)
        }

        let constraintConflicts = self.constraintConflicts(plan)
        guard constraintConflicts.isEmpty else { return .refused(.constraintConflicts(constraintConflicts)) }
        return .ready(plan)
    }

    /// Applies a checked plan: new rows, changed values, to-many lists
    /// (after every to-one, so a list has the last word), then deletes.
    mutating func apply(_ plan: MemorySavePlan) {
        for (root, key) in plan.lastPrimaryKeys { setLastPrimaryKey(key, root: root) }
        for write in plan.inserts {
            insertRow(StoredRow(entityName: write.permanentID.entityName, version: write.version), root: write.root, primaryKey: write.primaryKey)
        }
        for write in plan.inserts + plan.updates {
            for (name, value) in write.attributes { setAttribute(name, to: value, root: write.root, primaryKey: write.primaryKey) }
            for (name, value) in write.toOnes { setToOne(name, to: value, root: write.root, primaryKey: write.primaryKey) }
            setVersion(write.version, root: write.root, primaryKey: write.primaryKey)
        }
        for write in plan.inserts + plan.updates {
            for (name, keys) in write.toMany { setToMany(name, of: write.permanentID, ownerKey: write.primaryKey, to: keys) }
        }
        for removal in plan.deletes { removeRow(root: removal.root, primaryKey: removal.primaryKey) }
    }

    // MARK: - Checks

    private func requireHeld(_ id: ObjectID, action: String) throws(StrataError) {
        guard layout.entityNames.contains(id.entityName) else {
            throw StrataError(.invalidValue, "\(action) of \(id): store \(identifier) does not hold entity '\(id.entityName)'")
        }
    }

    private func requirePermanent(_ id: ObjectID, action: String) throws(StrataError) {
        guard !id.isTemporary else {
            throw StrataError(.invalidValue, "\(action) of \(id): the object was never saved")
        }
        guard id.storeIdentifier == identifier else {
            throw StrataError(.invalidValue, "\(action) of \(id): the object belongs to store \(id.storeIdentifier), not \(identifier)")
        }
        try requireHeld(id, action: action)
    }

    private func normalize(
        _ values: PropertyValues,
        _ toMany: [String: [ObjectID]],
        into write: inout MemorySavePlan.Write,
        resolver: MemoryReferenceResolver
    ) throws(StrataError) {
        let entity = write.permanentID.entityName
        for name in values.keys.sorted() {
            let value = values[name] ?? .null
            if let attribute = layout.attribute(name, of: entity) {
                write.attributes.append((name, try AttributeValueCoercion.coerce(value, to: attribute, entity: entity)))
            } else if isTransient(name, of: entity) {
                continue // transient: never stored (as in the SQLite store)
            } else if let relationship = layout.relationship(name, of: entity), relationship.storage != .transient {
                guard !relationship.description.isToMany else {
                    throw StrataError(.invalidValue, "\(entity).\(name) is a to-many relationship: give its destinations in toMany")
                }
                switch value {
                case .null:
                    write.toOnes.append((name, .null))
                case .object(let id):
                    let target = try resolver.resolve(id, relationship: relationship, context: "\(entity).\(name)")
                    write.toOnes.append((name, .object(target.id)))
                default:
                    throw StrataError(.invalidValue, "\(entity).\(name): \(AttributeValueCoercion.kind(of: value)) \(value) is not an object ID")
                }
            } else {
                throw unknownProperty(name, entity: entity)
            }
        }
        for name in toMany.keys.sorted() where !isTransient(name, of: entity) {
            guard let relationship = layout.relationship(name, of: entity), relationship.storage != .transient else {
                throw unknownProperty(name, entity: entity)
            }
            guard relationship.description.isToMany else {
                throw StrataError(.invalidValue, "\(entity).\(name) is a to-one relationship: give its destination in values")
            }
            var keys: [Int64] = []
            for id in toMany[name] ?? [] {
                keys.append(try resolver.resolve(id, relationship: relationship, context: "\(entity).\(name)").primaryKey)
            }
            write.toMany.append((name, keys))
        }
    }

    private func isTransient(_ name: String, of entity: String) -> Bool {
        model.attribute(named: name, in: entity)?.isTransient == true || model.relationship(named: name, in: entity)?.isTransient == true
    }

    private func unknownProperty(_ name: String, entity: String) -> StrataError {
        StrataError(.invalidValue, "entity '\(entity)' has no persisted attribute or relationship '\(name)'")
    }
}
