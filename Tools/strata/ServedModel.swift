import StrataWire

/// The model a server serves (its GetModel answer), with the look-ups the
/// commands need: entities by name, their properties, inheritance.
struct ServedModel: Sendable {
    /// The server's description.
    let response: Strata_V1_GetModelResponse
    private let entitiesByName: [String: Strata_V1_EntityInfo]

    init(_ response: Strata_V1_GetModelResponse) {
        self.response = response
        var byName: [String: Strata_V1_EntityInfo] = [:]
        for entity in response.entities { byName[entity.name] = entity }
        entitiesByName = byName
    }

    /// The entity named `name`, or an invalid-input error listing the known ones.
    func entity(_ name: String) throws(CLIError) -> Strata_V1_EntityInfo {
        if let entity = entitiesByName[name] { return entity }
        let known = response.entities.map(\.name).joined(separator: ", ")
        throw .invalid("unknown entity '\(name)' (the model has: \(known))")
    }

    /// The entity named `name`, if the model has it.
    func entityIfKnown(_ name: String) -> Strata_V1_EntityInfo? {
        entitiesByName[name]
    }

    /// Whether `entity` is `ancestor` or one of its subentities.
    func isKind(_ entity: String, of ancestor: String) -> Bool {
        var current: String? = entity
        var seen: Set<String> = []
        while let name = current, seen.insert(name).inserted {
            if name == ancestor { return true }
            let parent = entitiesByName[name]?.parent ?? ""
            current = parent.isEmpty ? nil : parent
        }
        return false
    }

    /// The persisted properties of `entity` that values show, in model
    /// order: attributes that are not transient, then to-one relationships.
    func shownKeys(of entity: Strata_V1_EntityInfo) -> [String] {
        entity.attributes.filter { !$0.transient }.map(\.name)
            + entity.relationships.filter { !$0.transient && !$0.toMany }.map(\.name)
    }

    /// The names of the to-many relationships of `entity` that are persisted.
    func toManyNames(of entity: Strata_V1_EntityInfo) -> [String] {
        entity.relationships.filter { !$0.transient && $0.toMany }.map(\.name)
    }
}
