/// What happens to a relationship's destinations when its source is deleted.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable, Codable {
    /// Clear the inverse on each destination.
    case nullify = "Nullify"
    /// Delete each destination too.
    case cascade = "Cascade"
    /// Refuse the delete (error 1600) while there are destinations.
    case deny = "Deny"
    /// Do nothing; the inverse may be left dangling.
    case noAction = "No Action"
}

/// A relationship from one entity to another.
public struct RelationshipDescription: Sendable, Hashable {
    /// The relationship's name, unique within its entity and its ancestors.
    public var name: String
    /// The destination entity's name.
    public var destinationEntityName: String
    /// The inverse relationship's name on the destination, if any.
    public var inverseName: String?
    /// The entity Xcode records for the inverse (usually the destination).
    public var inverseEntityName: String?
    /// Whether the relationship holds several destinations.
    public var isToMany: Bool
    /// Whether a to-many relationship keeps its destinations in order.
    public var isOrdered: Bool
    /// Whether the relationship may be empty / nil.
    public var isOptional: Bool
    /// Whether the relationship lives only in memory.
    public var isTransient: Bool
    /// Minimum number of destinations (0 = no minimum).
    public var minCount: Int
    /// Maximum number of destinations (0 = no maximum; to-one is 1).
    public var maxCount: Int
    /// The delete rule.
    public var deleteRule: DeleteRule
    /// Whether the foreign key is indexed (legacy flag).
    public var isIndexed: Bool
    /// Xcode's version hash modifier.
    public var versionHashModifier: String?
    /// The renaming identifier (`elementID`).
    public var renamingIdentifier: String?
    /// Free-form user info.
    public var userInfo: [String: String]

    /// Creates a relationship; a to-one unless `toMany` is true.
    public init(
        name: String,
        destination: String,
        inverse: String? = nil,
        inverseEntityName: String? = nil,
        toMany: Bool = false,
        ordered: Bool = false,
        optional: Bool = true,
        transient: Bool = false,
        minCount: Int = 0,
        maxCount: Int? = nil,
        deleteRule: DeleteRule = .nullify,
        indexed: Bool = false,
        versionHashModifier: String? = nil,
        renamingIdentifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.inverseEntityName = inverseEntityName ?? (inverse == nil ? nil : destination)
        self.isToMany = toMany
        self.isOrdered = ordered
        self.isOptional = optional
        self.isTransient = transient
        self.minCount = minCount
        self.maxCount = maxCount ?? (toMany ? 0 : 1)
        self.deleteRule = deleteRule
        self.isIndexed = indexed
        self.versionHashModifier = versionHashModifier
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
    }
}
