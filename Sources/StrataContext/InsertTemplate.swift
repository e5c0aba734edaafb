import StrataModel

/// What inserting an object of an entity starts from.
struct InsertTemplate: Sendable {
    /// The entity's layout (``defaults`` follow its ``ObjectGraph/EntityLayout/values``).
    var layout: ObjectGraph.EntityLayout
    /// Non-nil default values of persisted attributes.
    var defaults: PropertyValues
    /// Non-nil default values of transient attributes.
    var transientDefaults: [String: PropertyValue]

    /// The template of a concrete entity; throws for unknown and
    /// abstract entities.
    init(entity entityName: String, model: ObjectModel, layout: ObjectGraph.EntityLayout) throws(StrataError) {
        guard let entity = model.entity(named: entityName) else {
            throw StrataError(.invalidValue, "unknown entity '\(entityName)'")
        }
        guard !entity.isAbstract else {
            throw StrataError(.invalidValue, "entity '\(entityName)' is abstract: insert one of its subentities (\(model.subentities(of: entityName).joined(separator: ", ")))")
        }
        // Every object of the entity keeps its values in one shared layout.
        self.layout = layout
        defaults = PropertyValues(layout: layout.values)
        transientDefaults = [:]
        for attribute in model.attributes(of: entityName) where !attribute.defaultValue.isNull {
            if attribute.isTransient {
                transientDefaults[attribute.name] = attribute.defaultValue
            } else {
                defaults[attribute.name] = attribute.defaultValue
            }
        }
    }
}
