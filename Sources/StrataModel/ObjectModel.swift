/// A managed object model: entities, configurations and fetch request
/// templates, with inheritance resolved.
///
/// An `ObjectModel` can be built from any descriptions, valid or not, so
/// that validation can report every problem at once; call
/// ``validated()`` (or use a loader that does) before giving it to a store.
public struct ObjectModel: Sendable, Hashable {
    /// The model's name (the `.xcdatamodel` folder's name, or chosen in code).
    public var name: String
    /// The entities in declaration order.
    public let entities: [EntityDescription]
    /// The configurations written in the model (the implicit default one is not listed).
    public let configurations: [ConfigurationDescription]
    /// Fetch request templates.
    public let fetchRequestTemplates: [FetchRequestTemplate]
    /// The file the model was read from, for diagnostics.
    public var sourceFile: String?
    /// 1-based line numbers of elements in ``sourceFile``, keyed by
    /// `"Entity"`, `"Entity.property"`, `"configuration:Name"` or
    /// `"fetchRequest:Name"`; empty for models built in code. The Xcode
    /// loader also records `"Entity.fetchIndex:Name"` and
    /// `"Entity.uniquenessConstraint:N"` (1-based), and numbers repeated
    /// declarations of a key `"key#2"`, `"key#3"`, … so that duplicates can
    /// be reported at their own line.
    public var sourceLines: [String: Int]
    /// Problems found while loading the model from a file (unknown attribute
    /// types, unparsable defaults or bounds, unknown delete rules…), reported
    /// by ``structuralDiagnostics()`` together with the structural ones.
    /// Empty for models built in code.
    public var loadDiagnostics: [ModelDiagnostic] = []

    private let index: [String: Int]
    private let resolved: [String: ResolvedEntity]

    /// Inheritance-resolved view of one entity.
    private struct ResolvedEntity: Sendable, Hashable {
        var ancestry: [String] = []          // root first, the entity itself last
        var subentities: [String] = []       // direct children
        var attributes: [AttributeDescription] = []
        var relationships: [RelationshipDescription] = []
        var fetchedProperties: [FetchedPropertyDescription] = []
        var attributeIndex: [String: Int] = [:]
        var relationshipIndex: [String: Int] = [:]
    }

    /// Builds a model from descriptions. Never fails; duplicates keep the
    /// first declaration and parent cycles are cut, so that ``validate()``
    /// can still report them.
    public init(
        name: String = "Model",
        entities: [EntityDescription],
        configurations: [ConfigurationDescription] = [],
        fetchRequestTemplates: [FetchRequestTemplate] = [],
        sourceFile: String? = nil,
        sourceLines: [String: Int] = [:]
    ) {
        self.name = name
        self.entities = entities
        self.configurations = configurations
        self.fetchRequestTemplates = fetchRequestTemplates
        self.sourceFile = sourceFile
        self.sourceLines = sourceLines

        var index: [String: Int] = [:]
        for (i, entity) in entities.enumerated() where index[entity.name] == nil {
            index[entity.name] = i
        }
        self.index = index

        var resolved: [String: ResolvedEntity] = [:]
        for (name, i) in index {
            var chain: [Int] = [i]
            var seen: Set<String> = [name]
            var current = entities[i]
            while let parent = current.parentName, let p = index[parent], !seen.contains(parent) {
                seen.insert(parent)
                chain.append(p)
                current = entities[p]
            }
            var view = ResolvedEntity()
            for j in chain.reversed() {
                let e = entities[j]
                view.ancestry.append(e.name)
                for a in e.attributes where !view.attributes.contains(where: { $0.name == a.name }) {
                    view.attributes.append(a)
                }
                for r in e.relationships where !view.relationships.contains(where: { $0.name == r.name }) {
                    view.relationships.append(r)
                }
                for f in e.fetchedProperties where !view.fetchedProperties.contains(where: { $0.name == f.name }) {
                    view.fetchedProperties.append(f)
                }
            }
            for (i, attribute) in view.attributes.enumerated() { view.attributeIndex[attribute.name] = i }
            for (i, relationship) in view.relationships.enumerated() { view.relationshipIndex[relationship.name] = i }
            resolved[name] = view
        }
        for entity in entities where index[entity.name] != nil {
            if let parent = entity.parentName, resolved[parent] != nil, parent != entity.name,
               resolved[parent]?.subentities.contains(entity.name) == false,
               resolved[entity.name]?.ancestry.contains(parent) == true {
                resolved[parent]?.subentities.append(entity.name)
            }
        }
        self.resolved = resolved
    }

    /// Whether the model has an entity with this name. Unlike
    /// ``entity(named:)``, copies no description: for checks on every
    /// request.
    public func containsEntity(named name: String) -> Bool {
        index[name] != nil
    }

    /// The entity with this name.
    public func entity(named name: String) -> EntityDescription? {
        index[name].map { entities[$0] }
    }

    /// The entity's ancestors and itself, root first.
    public func ancestry(of entityName: String) -> [String] {
        resolved[entityName]?.ancestry ?? []
    }

    /// The root of the entity's inheritance hierarchy (itself if it has no parent).
    public func rootEntityName(of entityName: String) -> String {
        resolved[entityName]?.ancestry.first ?? entityName
    }

    /// The entity's direct subentities, in declaration order.
    public func subentities(of entityName: String) -> [String] {
        resolved[entityName]?.subentities ?? []
    }

    /// The entity itself and every entity below it, depth first.
    public func hierarchy(of entityName: String) -> [String] {
        guard resolved[entityName] != nil else { return [] }
        var result = [entityName]
        for child in subentities(of: entityName) where child != entityName {
            result += hierarchy(of: child)
        }
        return result
    }

    /// Whether `entityName` is `ancestorName` or one of its subentities.
    public func isEntity(_ entityName: String, kindOf ancestorName: String) -> Bool {
        ancestry(of: entityName).contains(ancestorName)
    }

    /// Every attribute of the entity: inherited ones first, then its own.
    public func attributes(of entityName: String) -> [AttributeDescription] {
        resolved[entityName]?.attributes ?? []
    }

    /// Every relationship of the entity: inherited ones first, then its own.
    public func relationships(of entityName: String) -> [RelationshipDescription] {
        resolved[entityName]?.relationships ?? []
    }

    /// Every fetched property of the entity: inherited ones first, then its own.
    public func fetchedProperties(of entityName: String) -> [FetchedPropertyDescription] {
        resolved[entityName]?.fetchedProperties ?? []
    }

    /// The attribute with this name on the entity or an ancestor.
    public func attribute(named name: String, in entityName: String) -> AttributeDescription? {
        guard let view = resolved[entityName], let i = view.attributeIndex[name] else { return nil }
        return view.attributes[i]
    }

    /// The relationship with this name on the entity or an ancestor.
    public func relationship(named name: String, in entityName: String) -> RelationshipDescription? {
        guard let view = resolved[entityName], let i = view.relationshipIndex[name] else { return nil }
        return view.relationships[i]
    }

    /// The fetched property with this name on the entity or an ancestor.
    public func fetchedProperty(named name: String, in entityName: String) -> FetchedPropertyDescription? {
        resolved[entityName]?.fetchedProperties.first { $0.name == name }
    }

    /// The inverse of a relationship of `entityName`, if declared and present.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let inverseName = relationship.inverseName else { return nil }
        return self.relationship(named: inverseName, in: relationship.destinationEntityName)
    }

    /// The configuration with this name.
    public func configuration(named name: String) -> ConfigurationDescription? {
        configurations.first { $0.name == name }
    }

    /// The entities a configuration holds: its members and their subentities.
    /// `nil` (the default configuration) holds every entity.
    public func entityNames(inConfiguration name: String?) -> [String] {
        guard let name else { return entities.map(\.name) }
        guard let configuration = configuration(named: name) else { return [] }
        var result: [String] = []
        for member in configuration.entityNames where index[member] != nil && !result.contains(member) {
            result.append(member)
        }
        return result
    }

    /// The names of the configurations that list the entity.
    public func configurations(containing entityName: String) -> [String] {
        configurations.filter { $0.entityNames.contains(entityName) }.map(\.name)
    }

    /// The fetch request template with this name.
    public func fetchRequestTemplate(named name: String) -> FetchRequestTemplate? {
        fetchRequestTemplates.first { $0.name == name }
    }

    /// The line in ``sourceFile`` of an element, when known.
    public func line(entity: String? = nil, property: String? = nil, key: String? = nil) -> Int? {
        if let key { return sourceLines[key] }
        switch (entity, property) {
        case let (entity?, property?): return sourceLines["\(entity).\(property)"] ?? sourceLines[entity]
        case let (entity?, nil): return sourceLines[entity]
        default: return nil
        }
    }
}
