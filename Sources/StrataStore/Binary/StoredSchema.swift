import StrataModel

/// The persisted shape of each entity a binary store holds, recorded in
/// the file next to the entity's version hash, so that a store opened with
/// a different model can say exactly what changed and migrate lightweight
/// changes.
///
/// Properties are the entity's resolved persisted ones (inherited first),
/// with the facts the version hash covers.
struct StoredSchema: Sendable, Hashable {
    /// A persisted attribute.
    struct Attribute: Sendable, Hashable {
        /// The name.
        var name: String
        /// The type, as Xcode spells it.
        var type: String
        /// Whether nil is allowed.
        var isOptional: Bool
        /// The version hash modifier.
        var versionHashModifier: String?
    }

    /// A persisted relationship.
    struct Relationship: Sendable, Hashable {
        /// The name.
        var name: String
        /// The destination entity.
        var destination: String
        /// The inverse's name.
        var inverse: String?
        /// To-many or to-one.
        var isToMany: Bool
        /// Ordered (to-many only).
        var isOrdered: Bool
        /// Whether it may be empty or nil.
        var isOptional: Bool
        /// The version hash modifier.
        var versionHashModifier: String?
    }

    /// One entity.
    struct Entity: Sendable, Hashable {
        /// The name.
        var name: String
        /// The model's version hash of the entity (32 bytes).
        var versionHash: [UInt8]
        /// The parent entity.
        var parent: String?
        /// Whether the entity is abstract.
        var isAbstract: Bool
        /// The entity's version hash modifier.
        var versionHashModifier: String?
        /// Resolved persisted attributes.
        var attributes: [Attribute]
        /// Resolved persisted relationships.
        var relationships: [Relationship]
    }

    /// The entities, sorted by name.
    var entities: [Entity]

    /// The entity named `name`.
    func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }

    /// The schema of `entityNames` in `model`.
    init(model: ObjectModel, entityNames: Set<String>) {
        entities = entityNames.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.compactMap { name in
            guard let entity = model.entity(named: name) else { return nil }
            return Entity(
                name: name,
                versionHash: model.versionHash(ofEntity: name),
                parent: entity.parentName,
                isAbstract: entity.isAbstract,
                versionHashModifier: entity.versionHashModifier,
                attributes: model.attributes(of: name).filter(\.isPersisted).map {
                    Attribute(name: $0.name, type: $0.type.xcodeName, isOptional: $0.isOptional, versionHashModifier: $0.versionHashModifier)
                },
                relationships: model.relationships(of: name).filter { !$0.isTransient }.map {
                    Relationship(name: $0.name, destination: $0.destinationEntityName, inverse: $0.inverseName, isToMany: $0.isToMany,
                                 isOrdered: $0.isOrdered, isOptional: $0.isOptional, versionHashModifier: $0.versionHashModifier)
                }
            )
        }
    }

    /// A schema read from a file.
    init(entities: [Entity]) {
        self.entities = entities
    }
}
