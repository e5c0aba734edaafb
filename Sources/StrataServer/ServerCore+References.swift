import StrataModel
import StrataWire

extension ServerCore {
    /// Removes from answered objects the references (to-one values,
    /// included to-many lists) to objects the caller may not read: a
    /// to-one to such an object reads as nil, a to-many leaves it out.
    /// Nothing to do without a policy, or when every entity a relationship
    /// leads to may be read whole.
    func withoutHiddenReferences(_ states: [Strata_V1_ObjectState], policy: AccessPolicy?) async throws -> [Strata_V1_ObjectState] {
        guard let policy, try mayHideReferences(policy) else { return states }
        var referenced: [ObjectID] = []
        for state in states {
            for value in state.values.values {
                switch value.kind {
                case .object(let text)?: if let id = try? PropertyValue.parseObjectID(text) { referenced.append(id) }
                case .objects(let list)?: referenced += list.ids.compactMap { try? PropertyValue.parseObjectID($0) }
                default: break
                }
            }
        }
        guard !referenced.isEmpty else { return states }
        let readable = Set(try await readableIDs(referenced, policy: policy).map(\.uriRepresentation))
        return states.map { state in
            var state = state
            for (key, value) in state.values {
                switch value.kind {
                case .object(let text)? where !readable.contains(text):
                    state.values[key] = nil
                case .objects(var list)?:
                    let kept = list.ids.filter(readable.contains)
                    if kept.count != list.ids.count {
                        list.ids = kept
                        state.values[key]?.objects = list
                    }
                default:
                    break
                }
            }
            return state
        }
    }

    /// Conflict records without references to objects the caller may not
    /// read (in the cached, stored and local values alike).
    func withoutHiddenReferences(_ conflicts: [ConflictRecord], policy: AccessPolicy?) async throws -> [ConflictRecord] {
        guard let policy, try mayHideReferences(policy) else { return conflicts }
        var referenced: [ObjectID] = []
        for conflict in conflicts {
            for values in [conflict.cachedValues, conflict.persistedValues ?? [:], conflict.localChanges] {
                for value in values.values {
                    switch value {
                    case .object(let id): referenced.append(id)
                    case .objects(let ids): referenced += ids
                    default: break
                    }
                }
            }
        }
        guard !referenced.isEmpty else { return conflicts }
        let readable = try await readableIDs(referenced, policy: policy)
        func redact(_ values: [String: PropertyValue]) -> [String: PropertyValue] {
            values.mapValues { value in
                switch value {
                case .object(let id) where !readable.contains(id): .null
                case .objects(let ids): .objects(ids.filter(readable.contains))
                default: value
                }
            }
        }
        return conflicts.map { conflict in
            var conflict = conflict
            conflict.cachedValues = redact(conflict.cachedValues)
            conflict.persistedValues = conflict.persistedValues.map(redact)
            conflict.localChanges = redact(conflict.localChanges)
            return conflict
        }
    }

    /// Whether some relationship leads to an entity not every object of
    /// which the caller may read.
    func mayHideReferences(_ policy: AccessPolicy) throws -> Bool {
        for entity in model.entities {
            for relationship in entity.relationships where try policy.predicate(.read, for: relationship.destinationEntityName) != .constant(true) {
                return true
            }
        }
        return false
    }
}
