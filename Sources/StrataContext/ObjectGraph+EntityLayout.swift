import StrataModel

extension ObjectGraph {
    /// An entity's attributes by name, for the per-value paths (setting a
    /// value): one lookup of a reference instead of the model's two
    /// lookups and a copy of the whole ``AttributeDescription``.
    final class EntityLayout: Sendable {
        /// One attribute, shared by reference.
        final class Attribute: Sendable {
            let description: AttributeDescription
            /// The fields setting a value reads, apart (reading them from
            /// `description` would copy the whole description).
            let name: String
            let type: AttributeType
            let isTransient: Bool
            /// The attribute's slot in ``EntityLayout/values`` (nil for transients).
            let slot: Int?
            init(_ description: AttributeDescription, slot: Int?) {
                self.description = description
                name = description.name
                type = description.type
                isTransient = description.isTransient
                self.slot = slot
            }
        }

        /// The attributes by name.
        private let attributes: NameLookup<Attribute>
        /// The persisted attributes and to-one relationships, by name.
        let persistedKeys: [String]
        /// The keys whose values can hold object IDs: every relationship,
        /// and the attributes (transient or not) of the types whose values
        /// are not converted to one kind (undefined, object ID, composite).
        /// The other attributes' values always have their type's kind
        /// (``ObjectGraph/checked(_:for:entity:)``, the stores' decoding).
        let referenceKeys: [String]

        /// The attribute of a name (see ``NameLookup``: once per value set).
        @inline(__always)
        func attribute(named name: String) -> Attribute? {
            attributes[name]
        }

        /// Whether an object of the entity can hold an ``ObjectID`` in its
        /// values, transients or lists (results of fetched properties apart).
        var holdsObjectIDs: Bool { !referenceKeys.isEmpty }

        /// The layout of the entity's persisted keys, which inserted
        /// objects' changes follow.
        let values: PropertyValues.Layout

        init(entity: String, model: ObjectModel) {
            persistedKeys = model.attributes(of: entity).filter(\.isPersisted).map(\.name)
                + model.relationships(of: entity).filter { !$0.isToMany && !$0.isTransient }.map(\.name)
            values = PropertyValues.Layout(names: persistedKeys)
            var attributes: [String: Attribute] = [:]
            for attribute in model.attributes(of: entity) {
                attributes[attribute.name] = Attribute(attribute, slot: attribute.isTransient ? nil : values.slot(of: attribute.name))
            }
            self.attributes = NameLookup(attributes)
            referenceKeys = model.relationships(of: entity).map(\.name) + model.attributes(of: entity).filter {
                switch $0.type {
                case .undefined, .objectID, .composite: true
                default: false
                }
            }.map(\.name)
        }
    }
}
