import StrataModel

extension Context {
    /// Deletes an object, applying delete rules: Cascade deletes the
    /// destinations too, Nullify clears their inverse, Deny refuses (1600)
    /// while there are destinations, No Action leaves them. Refusal changes
    /// nothing. The delete is written at the next save.
    public func delete(_ object: ManagedObject) async throws {
        // Collect the cascade closure and check Deny rules before changing anything.
        var toDelete: [ManagedObject] = []
        var seen: Set<ObjectID> = []
        var queue = [object]
        var denials: [String] = []
        while let next = queue.popLast() {
            guard seen.insert(next.objectID).inserted, !next.isDeleted else { continue }
            try await load(next)
            toDelete.append(next)
            for relationship in model.relationships(of: next.entityName) where !relationship.isTransient {
                let destinations = try await destinationIDs(of: next, relationship)
                switch relationship.deleteRule {
                case .deny where !destinations.isEmpty:
                    denials.append("\(next.entityName).\(relationship.name) of \(next.objectID) still has \(destinations.count) object(s)")
                case .cascade:
                    queue += destinations.map { graph.object(for: $0) }
                default:
                    break
                }
            }
        }
        guard denials.isEmpty else {
            throw StrataError(.validationRelationshipDeniedDelete, "delete of \(object.objectID) denied by a Deny rule; nothing was deleted", details: denials)
        }
        let deleting = Set(toDelete.map(\.objectID))
        // Load everything the nullify pass touches first, so that pass makes
        // all its changes without suspending: a failure here changes nothing.
        var nullify: [(ManagedObject, RelationshipDescription, [ObjectID])] = []
        for victim in toDelete {
            for relationship in model.relationships(of: victim.entityName) where !relationship.isTransient && relationship.deleteRule != .noAction {
                guard let inverse = model.inverse(of: relationship), !inverse.isTransient else { continue }
                let destinations = try await destinationIDs(of: victim, relationship).filter { !deleting.contains($0) }
                for id in destinations {
                    let destination = graph.object(for: id)
                    try await load(destination)
                    if inverse.isToMany { try await loadList(inverse.name, of: destination) }
                }
                nullify.append((victim, inverse, destinations))
            }
        }
        for (victim, inverse, destinations) in nullify {
            for id in destinations {
                let destination = graph.object(for: id)
                guard !destination.isDeleted else { continue }
                if inverse.isToMany {
                    try graph.removeDestinationRaw(victim.objectID, from: destination, forKey: inverse.name)
                } else {
                    graph.setRaw(destination, inverse.name, .null)
                }
            }
        }
        for victim in toDelete {
            victim.isDeleted = true
            if victim.isInserted { victim.changes.removeAll() }
        }
    }

    private func destinationIDs(of object: ManagedObject, _ relationship: RelationshipDescription) async throws -> [ObjectID] {
        if relationship.isToMany {
            if !object.isInserted { try await loadList(relationship.name, of: object) }
            return graph.currentList(of: object, forKey: relationship.name) ?? []
        }
        if case .object(let id)? = graph.currentValue(of: object, forKey: relationship.name) { return [id] }
        return []
    }
}
