import StrataContext
import StrataModel
import StrataWire

/// Builds the wire state of managed objects inside their context.
struct ObjectStateBuilder: Sendable {
    let model: ObjectModel
    /// Fetched properties to evaluate; `nil` = every one of the object's entity.
    let fetched: [String]?
    /// To-many relationships whose destination IDs to include.
    let relationships: [String]

    /// Checks that the names exist for `entityName` (or a subentity).
    func validate(for entityName: String) throws {
        let entities = model.hierarchy(of: entityName)
        for name in fetched ?? [] where !entities.contains(where: { model.fetchedProperty(named: name, in: $0) != nil }) {
            throw WireError(.invalidArgument, "entity '\(entityName)' has no fetched property '\(name)'", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        for name in relationships where !entities.contains(where: { model.relationship(named: name, in: $0)?.isToMany == true }) {
            throw WireError(.invalidArgument, "entity '\(entityName)' has no to-many relationship '\(name)'", strataCode: StrataError.Code.invalidValue.rawValue)
        }
    }

    /// The state of a loaded object.
    func state(of object: ManagedObject, in context: isolated Context) async throws -> Strata_V1_ObjectState {
        var state = Strata_V1_ObjectState()
        let entity = object.entityName
        state.id = object.objectID.uriRepresentation
        state.entity = entity
        state.version = object.persistedVersion
        for attribute in model.attributes(of: entity) where attribute.isPersisted {
            let value = object[attribute.name]
            if !value.isNull { state.values[attribute.name] = value.wire }
        }
        for relationship in model.relationships(of: entity) where !relationship.isTransient {
            if relationship.isToMany {
                guard relationships.contains(relationship.name) else { continue }
                let ids = try await context.destinationIDs(of: object, relationship.name)
                state.values[relationship.name] = PropertyValue.objects(ids).wire
            } else {
                let value = object[relationship.name]
                if !value.isNull { state.values[relationship.name] = value.wire }
            }
        }
        let names = fetched ?? model.fetchedProperties(of: entity).map(\.name)
        for name in names where model.fetchedProperty(named: name, in: entity) != nil {
            let results = try await context.fetchedProperty(name, of: object)
            state.fetched[name] = Strata_V1_ObjectIDList.with { $0.ids = results.map(\.objectID.uriRepresentation) }
        }
        return state
    }
}
