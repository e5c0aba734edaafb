import StrataModel

extension Context {
    /// Applies a save request to this (fresh) context and saves it: the
    /// context route of ``Coordinator/save(_:)``. `prepared`: the inserts'
    /// values as the direct route checked them (defaults and derived values
    /// included), set as they are.
    func save(_ request: SaveRequest, prepared: [PropertyValues]?) async throws -> SaveOutcome {
        // Inserts first, so values anywhere in the save can name them.
        var inserted: [ManagedObject] = []
        inserted.reserveCapacity(request.inserts.count)
        for (index, insert) in request.inserts.enumerated() {
            let object = try self.insert(insert.entity, id: insert.id, into: insert.storeIdentifier)
            if let prepared, index < prepared.count { object.changes = prepared[index] }
            inserted.append(object)
        }
        if prepared == nil {
            for (insert, object) in zip(request.inserts, inserted) {
                try apply(insert.values, to: object, label: "insert \(insert.id)")
            }
        }
        for update in request.updates {
            let object = try await existingObject(with: update.id)
            if update.baseVersion != 0 {
                try rebase(object, onVersion: update.baseVersion, values: update.baseValues)
            }
            try apply(update.values, to: object, label: "update \(update.id)")
        }
        for delete in request.deletes {
            let object = try await existingObject(with: delete.id)
            if delete.baseVersion != 0 {
                try rebase(object, onVersion: delete.baseVersion)
            }
            try await self.delete(object)
        }
        let changes = try await save()
        return SaveOutcome(insertedIDs: inserted.map(\.objectID), changes: changes, route: .context)
    }

    /// Sets values on an object: attributes and to-one relationships with
    /// `setValue(_:forKey:)`, to-many relationships by replacing the list
    /// (nil: empty). Transient properties are refused: the context ends
    /// with the save, so a transient value would be dropped without a word.
    private func apply(_ values: [String: PropertyValue], to object: ManagedObject, label: @autoclosure () -> String) throws {
        func set(_ key: String, _ value: PropertyValue) throws {
            let entity = object.entityName
            if model.attribute(named: key, in: entity)?.isTransient == true || model.relationship(named: key, in: entity)?.isTransient == true {
                throw StrataError(.invalidValue, "\(label()): '\(entity).\(key)' is transient: it is not stored, so a save cannot set it")
            }
            if case .objects(let ids) = value {
                try object.setDestinations(ids, forKey: key)
            } else if value.isNull, model.relationship(named: key, in: entity)?.isToMany == true {
                try object.setDestinations([], forKey: key)
            } else {
                try object.setValue(value, forKey: key)
            }
        }
        if values.count == 1, let (key, value) = values.first {
            try set(key, value)
            return
        }
        // Sorted so the first error reported is the same every time.
        for key in values.keys.sorted() {
            if let value = values[key] { try set(key, value) }
        }
    }
}
