import StrataModel
import StrataQuery

extension Context {
    /// The value of a fetched property: evaluated at first access with
    /// `$FETCH_SOURCE` bound to the object, across every store holding the
    /// target entity, then cached. Saves do not update it;
    /// ``refresh(_:mergeChanges:)`` with `true` (or merging a change to the
    /// target entity) makes the next access evaluate it again.
    public func fetchedProperty(_ name: String, of object: ManagedObject) async throws -> [ManagedObject] {
        guard let property = model.fetchedProperty(named: name, in: object.entityName) else {
            throw StrataError(.invalidValue, "entity '\(object.entityName)' has no fetched property '\(name)'")
        }
        if let cached = object.fetchedCache[name] {
            let objects = cached.filter { !vanished.contains($0) }.map { graph.object(for: $0) }
            try await load(objects, tolerateMissing: true)
            return objects.filter { !$0.isFault }
        }
        try await load(object)
        var predicate: StrataQuery.Predicate?
        if let text = property.predicate {
            let key = "\(object.entityName).\(name)"
            if let cached = fetchedPredicateCache[key] {
                predicate = cached
            } else {
                let parsed = try PredicateParser.parse(text)
                fetchedPredicateCache[key] = parsed
                predicate = parsed
            }
        }
        var values: [String: PropertyValue] = [:]
        for attribute in model.attributes(of: object.entityName) {
            values[attribute.name] = try object.value(forKey: attribute.name)
        }
        for relationship in model.relationships(of: object.entityName) where !relationship.isToMany {
            values[relationship.name] = try object.value(forKey: relationship.name)
        }
        let request = FetchRequest(entityName: property.entityName, predicate: predicate)
        let resolved = try restricted(coordinator.resolver.resolve(request, variables: ["FETCH_SOURCE": .object(object.objectID, values: values)], source: property.predicate))
        let results = try await fetch(resolved: resolved)
        object.fetchedCache[name] = results.map(\.objectID)
        return results
    }
}
