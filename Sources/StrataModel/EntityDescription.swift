/// An entity: a kind of object with attributes, relationships and fetched
/// properties, optionally inheriting from a parent entity.
///
/// The description holds only what the entity declares itself; the
/// ``ObjectModel`` resolves inheritance (``ObjectModel/attributes(of:)``).
public struct EntityDescription: Sendable, Hashable {
    /// The entity's name, unique in the model.
    public var name: String
    /// The parent entity's name, if any.
    public var parentName: String?
    /// Whether the entity is abstract (no instances of its own).
    public var isAbstract: Bool
    /// The class name Xcode records.
    public var representedClassName: String?
    /// The attributes the entity declares itself.
    public var attributes: [AttributeDescription]
    /// The relationships the entity declares itself.
    public var relationships: [RelationshipDescription]
    /// The fetched properties the entity declares itself.
    public var fetchedProperties: [FetchedPropertyDescription]
    /// Fetch indexes (including legacy compound indexes).
    public var fetchIndexes: [FetchIndex]
    /// Uniqueness constraints: each is a list of property names unique together.
    public var uniquenessConstraints: [[String]]
    /// Xcode's version hash modifier.
    public var versionHashModifier: String?
    /// The renaming identifier (`elementID`).
    public var renamingIdentifier: String?
    /// Free-form user info.
    public var userInfo: [String: String]

    /// Creates an entity.
    public init(
        name: String,
        parent: String? = nil,
        isAbstract: Bool = false,
        representedClassName: String? = nil,
        attributes: [AttributeDescription] = [],
        relationships: [RelationshipDescription] = [],
        fetchedProperties: [FetchedPropertyDescription] = [],
        fetchIndexes: [FetchIndex] = [],
        uniquenessConstraints: [[String]] = [],
        versionHashModifier: String? = nil,
        renamingIdentifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.parentName = parent
        self.isAbstract = isAbstract
        self.representedClassName = representedClassName
        self.attributes = attributes
        self.relationships = relationships
        self.fetchedProperties = fetchedProperties
        self.fetchIndexes = fetchIndexes
        self.uniquenessConstraints = uniquenessConstraints
        self.versionHashModifier = versionHashModifier
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
    }
}
