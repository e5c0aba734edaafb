import StrataModel

/// How a memory-backed store lays out a model: which properties each
/// entity persists, and where each relationship lives.
///
/// Relationships are stored once per pair, with the same choices as the
/// SQLite schema (`SchemaLayout`):
/// - a to-one is a value of its row (`.object(id)`);
/// - a to-many whose inverse is a to-one is read through that inverse (the
///   destination rows' to-one values; an ordered one keeps each
///   destination's position in the destination row);
/// - a many-to-many pair shares one ``LinkTable``, owned by the side whose
///   slot sorts first (shallower entity, then entity name, then name);
/// - any other to-many (no inverse, or an inverse that does not point
///   back) has a ``LinkTable`` of its own;
/// - relationships to entities the store does not hold are external.
struct MemoryLayout: Sendable {
    /// Where one relationship's destinations are stored.
    enum Storage: Sendable, Hashable {
        /// A value of the row.
        case toOne
        /// The destinations' to-one values at `slot` (the inverse).
        case inverseToOne(slot: StorageSlot, ordered: Bool)
        /// The link table at `slot`: its forward lists, or its reverse ones.
        case link(slot: StorageSlot, forward: Bool)
        /// Transient: never stored.
        case transient
        /// The destination entity is not held by this store.
        case external
    }

    /// A relationship of one entity, resolved.
    struct Relationship: Sendable, Hashable {
        /// The model's description.
        var description: RelationshipDescription
        /// Where it is stored.
        var storage: Storage
        /// The root of the destination entity's hierarchy.
        var destinationRoot: String
    }

    /// A derived index: the sources of each to-one slot whose inverse is a
    /// to-many, grouped by destination primary key.
    struct ChildIndex: Sendable, Hashable {
        /// The to-one slot.
        var slot: StorageSlot
        /// The hierarchy holding the rows with the to-one.
        var childRoot: String
        /// The hierarchy the to-one points into.
        var parentRoot: String
        /// Whether the inverse to-many is ordered (rows keep `orderKeys[slot.name]`).
        var ordered: Bool
    }

    /// A link table's shape.
    struct LinkSpec: Sendable, Hashable {
        /// The owning relationship's slot.
        var slot: StorageSlot
        /// The hierarchy of the sources.
        var sourceRoot: String
        /// The hierarchy of the destinations.
        var destinationRoot: String
        /// Whether the owning relationship is ordered.
        var forwardOrdered: Bool
        /// Whether the inverse (when it shares the table) is ordered.
        var reverseOrdered: Bool
    }

    /// A uniqueness constraint and the entities it covers.
    struct Constraint: Sendable, Hashable {
        /// The entity declaring it.
        var entity: String
        /// The properties unique together.
        var properties: [String]
        /// The entity and its held subentities.
        var covered: Set<String>
        /// The hierarchy's root.
        var root: String
    }

    /// The model.
    let model: ObjectModel
    /// The entities the store holds.
    let entityNames: Set<String>
    /// The roots of the held hierarchies, sorted by name.
    let roots: [String]
    /// Persisted attributes per entity, by name.
    let attributes: [String: [String: AttributeDescription]]
    /// Persisted attributes per entity, inherited ones first.
    let attributeOrder: [String: [AttributeDescription]]
    /// Non-transient relationships per entity, by name.
    let relationships: [String: [String: Relationship]]
    /// Persisted to-one names per entity, in declaration order (for snapshots).
    let toOneNames: [String: [String]]
    /// Child indexes by to-one slot.
    let childIndexes: [StorageSlot: ChildIndex]
    /// For each entity, its to-ones that feed a child index: name → slot.
    let indexedToOnes: [String: [String: StorageSlot]]
    /// Link tables by owning slot.
    let links: [StorageSlot: LinkSpec]
    /// Uniqueness constraints.
    let constraints: [Constraint]
    /// For each entity, the constraints (indexes into ``constraints``) covering it.
    let constraintsCovering: [String: [Int]]
    /// For each entity and property, the constraints covering the entity that name the property.
    let constraintsNaming: [String: [String: [Int]]]

    /// Lays out the held entities of `model`. Fails with
    /// ``StrataError/Code/modelInvalid`` for an unknown entity or a
    /// uniqueness constraint naming something that is not a persisted
    /// attribute or to-one relationship.
    init(model: ObjectModel, entityNames: Set<String>) throws(StrataError) {
        self.model = model
        self.entityNames = entityNames
        for name in entityNames where model.entity(named: name) == nil {
            throw StrataError(.modelInvalid, "the store cannot hold unknown entity '\(name)'")
        }
        let sortedNames = entityNames.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        roots = Set(sortedNames.map { model.rootEntityName(of: $0) }).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }

        var attributes: [String: [String: AttributeDescription]] = [:]
        var attributeOrder: [String: [AttributeDescription]] = [:]
        var toOneNames: [String: [String]] = [:]
        for entity in sortedNames {
            let persisted = model.attributes(of: entity).filter(\.isPersisted)
            attributeOrder[entity] = persisted
            attributes[entity] = Dictionary(persisted.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            toOneNames[entity] = model.relationships(of: entity).filter { !$0.isTransient && !$0.isToMany }.map(\.name)
        }
        self.attributes = attributes
        self.attributeOrder = attributeOrder
        self.toOneNames = toOneNames

        var relationships: [String: [String: Relationship]] = [:]
        var childIndexes: [StorageSlot: ChildIndex] = [:]
        var indexedToOnes: [String: [String: StorageSlot]] = [:]
        var links: [StorageSlot: LinkSpec] = [:]
        for entity in sortedNames {
            var map: [String: Relationship] = [:]
            for relationship in model.relationships(of: entity) where map[relationship.name] == nil {
                let destination = relationship.destinationEntityName
                let destinationRoot = model.rootEntityName(of: destination)
                let storage = Self.storage(of: relationship, in: entity, model: model, held: entityNames)
                switch storage {
                case .inverseToOne(let slot, let ordered):
                    childIndexes[slot] = ChildIndex(slot: slot, childRoot: destinationRoot, parentRoot: model.rootEntityName(of: entity), ordered: ordered)
                case .link(let slot, _):
                    if links[slot] == nil, let owner = model.relationship(named: slot.name, in: slot.entity) {
                        let paired = Self.pairedInverse(of: owner, in: slot.entity, model: model)
                        links[slot] = LinkSpec(
                            slot: slot,
                            sourceRoot: model.rootEntityName(of: slot.entity),
                            destinationRoot: model.rootEntityName(of: owner.destinationEntityName),
                            forwardOrdered: owner.isOrdered,
                            reverseOrdered: paired?.isOrdered ?? false
                        )
                    }
                default:
                    break
                }
                map[relationship.name] = Relationship(description: relationship, storage: storage, destinationRoot: destinationRoot)
            }
            relationships[entity] = map
        }
        for entity in sortedNames {
            var map: [String: StorageSlot] = [:]
            for relationship in model.relationships(of: entity) where !relationship.isTransient && !relationship.isToMany {
                let slot = StorageSlot(entity: Self.declaringEntity(ofRelationship: relationship.name, in: entity, model: model), name: relationship.name)
                if childIndexes[slot] != nil { map[relationship.name] = slot }
            }
            indexedToOnes[entity] = map
        }
        self.relationships = relationships
        self.childIndexes = childIndexes
        self.indexedToOnes = indexedToOnes
        self.links = links

        var constraints: [Constraint] = []
        for entity in sortedNames {
            guard let description = model.entity(named: entity) else { continue }
            for properties in description.uniquenessConstraints where !properties.isEmpty {
                for property in properties {
                    let isAttribute = attributes[entity]?[property] != nil
                    let isToOne = relationships[entity]?[property].map { !$0.description.isToMany && $0.storage == .toOne } ?? false
                    guard isAttribute || isToOne else {
                        throw StrataError(.modelInvalid, "uniqueness constraint of '\(entity)' names '\(property)', which is not a persisted attribute or to-one relationship")
                    }
                }
                constraints.append(Constraint(
                    entity: entity,
                    properties: properties,
                    covered: Set(model.hierarchy(of: entity).filter { entityNames.contains($0) }),
                    root: model.rootEntityName(of: entity)
                ))
            }
        }
        self.constraints = constraints
        var covering: [String: [Int]] = [:]
        var naming: [String: [String: [Int]]] = [:]
        for (index, constraint) in constraints.enumerated() {
            for entity in constraint.covered.sorted() {
                covering[entity, default: []].append(index)
                for property in constraint.properties { naming[entity, default: [:]][property, default: []].append(index) }
            }
        }
        self.constraintsCovering = covering
        self.constraintsNaming = naming
    }

    // MARK: - Queries

    /// The persisted attribute `name` of `entity`.
    func attribute(_ name: String, of entity: String) -> AttributeDescription? {
        attributes[entity]?[name]
    }

    /// The non-transient relationship `name` of `entity`.
    func relationship(_ name: String, of entity: String) -> Relationship? {
        relationships[entity]?[name]
    }

    /// Whether `entity` is held and is `ancestor` or one of its subentities.
    func isHeld(_ entity: String, kindOf ancestor: String) -> Bool {
        entityNames.contains(entity) && model.isEntity(entity, kindOf: ancestor)
    }

    // MARK: - Building

    /// The entity (in `entity`'s ancestry, root first) declaring a relationship.
    static func declaringEntity(ofRelationship name: String, in entity: String, model: ObjectModel) -> String {
        for ancestor in model.ancestry(of: entity) where model.entity(named: ancestor)?.relationships.contains(where: { $0.name == name }) == true {
            return ancestor
        }
        return entity
    }

    /// SchemaLayout's slot order: shallower entity first, then entity name,
    /// then property name (UTF-8 bytes).
    static func precedes(_ a: StorageSlot, _ b: StorageSlot, model: ObjectModel) -> Bool {
        let (da, db) = (model.ancestry(of: a.entity).count, model.ancestry(of: b.entity).count)
        if da != db { return da < db }
        return a < b
    }

    /// The inverse of a to-many when the two form a many-to-many pair that
    /// shares one link table: a persisted to-many pointing back, at another slot.
    static func pairedInverse(of relationship: RelationshipDescription, in entity: String, model: ObjectModel) -> RelationshipDescription? {
        guard relationship.isToMany, !relationship.isTransient,
              let inverse = model.inverse(of: relationship), !inverse.isTransient, inverse.isToMany,
              inverse.inverseName == relationship.name else { return nil }
        let slot = StorageSlot(entity: declaringEntity(ofRelationship: relationship.name, in: entity, model: model), name: relationship.name)
        let inverseSlot = StorageSlot(entity: declaringEntity(ofRelationship: inverse.name, in: relationship.destinationEntityName, model: model), name: inverse.name)
        return inverseSlot == slot ? nil : inverse
    }

    private static func storage(of relationship: RelationshipDescription, in entity: String, model: ObjectModel, held: Set<String>) -> Storage {
        if relationship.isTransient { return .transient }
        let destination = relationship.destinationEntityName
        guard held.contains(destination) else { return .external }
        if !relationship.isToMany { return .toOne }
        let slot = StorageSlot(entity: declaringEntity(ofRelationship: relationship.name, in: entity, model: model), name: relationship.name)
        if let inverse = model.inverse(of: relationship), !inverse.isTransient, !inverse.isToMany {
            let inverseSlot = StorageSlot(entity: declaringEntity(ofRelationship: inverse.name, in: destination, model: model), name: inverse.name)
            return .inverseToOne(slot: inverseSlot, ordered: relationship.isOrdered)
        }
        if let inverse = pairedInverse(of: relationship, in: entity, model: model) {
            let inverseSlot = StorageSlot(entity: declaringEntity(ofRelationship: inverse.name, in: destination, model: model), name: inverse.name)
            return precedes(slot, inverseSlot, model: model)
                ? .link(slot: slot, forward: true)
                : .link(slot: inverseSlot, forward: false)
        }
        return .link(slot: slot, forward: true)
    }
}
