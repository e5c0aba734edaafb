import StrataModel

extension MemoryStorage {
    /// The uniqueness conflicts a plan would create, judged on the state
    /// after the save: every inserted or updated object whose constrained
    /// values (none of them nil, as in a SQL `UNIQUE` index) equal those of
    /// another object of the constrained entity or its subentities.
    ///
    /// Values compare as ``uniquenessKey(_:)`` says. `existingObjectID`
    /// names the saved object (untouched by the save) that already has the
    /// values; it is nil when the clash is only between objects of the save.
    /// Looks rows up in the uniqueness index: the cost grows with the
    /// change set, not with the store.
    func constraintConflicts(_ plan: MemorySavePlan) -> [ConstraintConflict] {
        guard !layout.constraints.isEmpty else { return [] }
        let removed = Set(plan.deletes)
        let temporaryIDs = Dictionary(plan.permanentIDs.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var conflicts: [ConstraintConflict] = []

        for (index, constraint) in layout.constraints.enumerated() {
            // The changed objects' values after the save.
            var changed: [(write: MemorySavePlan.Write, values: [PropertyValue], key: [PropertyValue])] = []
            var touched: Set<Int64> = []
            for write in plan.inserts + plan.updates where write.root == constraint.root {
                touched.insert(write.primaryKey)
                guard constraint.covered.contains(write.permanentID.entityName),
                      !removed.contains(MemorySavePlan.Removal(root: write.root, primaryKey: write.primaryKey)) else { continue }
                var current = row(root: write.root, primaryKey: write.primaryKey)?.values ?? [:]
                for (name, value) in write.attributes + write.toOnes { current[name] = value.isNull ? nil : value }
                let values = constraint.properties.map { current[$0] ?? .null }
                guard let key = Self.uniquenessKey(values) else { continue }
                changed.append((write, values, key))
            }
            guard !changed.isEmpty else { continue }

            var counts: [[PropertyValue]: Int] = [:]
            for entry in changed { counts[entry.key, default: 0] += 1 }
            for entry in changed {
                let holder = rows(withUniqueValues: entry.key, constraint: index).first { key in
                    !touched.contains(key) && !removed.contains(MemorySavePlan.Removal(root: constraint.root, primaryKey: key))
                }
                guard holder != nil || (counts[entry.key] ?? 0) > 1 else { continue }
                var values: [String: PropertyValue] = [:]
                for (name, value) in zip(constraint.properties, entry.values) {
                    if case .object(let id) = value, let temporary = temporaryIDs[id] {
                        values[name] = .object(temporary)
                    } else {
                        values[name] = value
                    }
                }
                conflicts.append(ConstraintConflict(
                    entityName: constraint.entity,
                    constraint: constraint.properties,
                    values: values,
                    objectID: entry.write.objectID,
                    existingObjectID: holder.flatMap { key in
                        row(root: constraint.root, primaryKey: key).map { objectID(entity: $0.entityName, primaryKey: key) }
                    }
                ))
            }
        }
        return conflicts
    }
}
