/// A fetched property: a lazily evaluated, cached fetch of another entity,
/// where `$FETCH_SOURCE` stands for the owning object.
public struct FetchedPropertyDescription: Sendable, Hashable {
    /// The property's name.
    public var name: String
    /// The entity fetched.
    public var entityName: String
    /// The predicate format string; `nil` fetches every object of the entity.
    public var predicate: String?
    /// Free-form user info.
    public var userInfo: [String: String]

    /// Creates a fetched property.
    public init(name: String, entity: String, predicate: String? = nil, userInfo: [String: String] = [:]) {
        self.name = name
        self.entityName = entity
        self.predicate = predicate
        self.userInfo = userInfo
    }
}
