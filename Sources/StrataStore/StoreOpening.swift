import StrataModel

/// Checks every store makes before opening.
public enum StoreOpening {
    /// The entities a store of this configuration holds: the configuration's
    /// members and all their subentities (every entity for `nil`).
    public static func entityNames(configuration: String?, model: ObjectModel) -> Set<String> {
        var names: Set<String> = []
        for member in model.entityNames(inConfiguration: configuration) {
            names.formUnion(model.hierarchy(of: member))
        }
        return names
    }

    /// Fails with 134080 when the configuration is not in the model.
    public static func checkConfiguration(_ description: StoreDescription, model: ObjectModel) throws {
        if let name = description.configuration, model.configuration(named: name) == nil {
            let known = model.configurations.map(\.name).joined(separator: ", ")
            throw StrataError(.storeOpen, "store \(description.displayName): model '\(model.name)' has no configuration '\(name)' (it has: \(known.isEmpty ? "none" : known))")
        }
    }

    /// Fails with 134080 naming every Transformable attribute (of the
    /// store's entities) whose transformer is not registered.
    public static func checkTransformers(_ description: StoreDescription, model: ObjectModel, transformers: ValueTransformerRegistry) throws {
        var missing: [String] = []
        for entity in entityNames(configuration: description.configuration, model: model).sorted() {
            for attribute in model.entity(named: entity)?.attributes ?? [] where attribute.type == .transformable {
                if let name = attribute.valueTransformerName, transformers.transformer(named: name) == nil {
                    missing.append("\(entity).\(attribute.name) uses unknown value transformer '\(name)'")
                }
            }
        }
        guard missing.isEmpty else {
            throw StrataError(.storeOpen, "store \(description.displayName): \(missing.count) attribute(s) name a value transformer that is not registered (registered: \(transformers.names.joined(separator: ", ")))", details: missing)
        }
    }
}
