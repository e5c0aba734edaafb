/// A fetch request stored in the model (Xcode's `fetchRequest` element).
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The template's name.
    public var name: String
    /// The entity fetched.
    public var entityName: String
    /// The predicate format string, usually with `$VARIABLES`; `nil` fetches all.
    public var predicate: String?
    /// The fetch limit (0 = none).
    public var fetchLimit: Int
    /// Xcode's result type number (0 objects, 1 IDs, 2 dictionaries, 4 count).
    public var resultType: Int

    /// Creates a template.
    public init(name: String, entity: String, predicate: String? = nil, fetchLimit: Int = 0, resultType: Int = 0) {
        self.name = name
        self.entityName = entity
        self.predicate = predicate
        self.fetchLimit = fetchLimit
        self.resultType = resultType
    }
}
