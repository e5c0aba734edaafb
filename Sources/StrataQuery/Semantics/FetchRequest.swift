import StrataModel

/// A request for objects of one entity: which ones, in what order, which window.
public struct FetchRequest: Sendable, Hashable {
    /// The entity fetched.
    public var entityName: String
    /// The filter; `nil` fetches every object.
    public var predicate: Predicate?
    /// The order, most significant first; ties are broken by primary key.
    public var sortDescriptors: [SortDescriptor]
    /// At most this many results (0 = no limit).
    public var fetchLimit: Int
    /// Skip this many results first.
    public var fetchOffset: Int
    /// Whether instances of subentities are included (default true).
    public var includesSubentities: Bool

    /// Creates a request.
    public init(
        entityName: String,
        predicate: Predicate? = nil,
        sortDescriptors: [SortDescriptor] = [],
        fetchLimit: Int = 0,
        fetchOffset: Int = 0,
        includesSubentities: Bool = true
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.includesSubentities = includesSubentities
    }

    /// Creates a request whose predicate is given in the NSPredicate format.
    public init(
        entityName: String,
        format: String,
        sortDescriptors: [SortDescriptor] = [],
        fetchLimit: Int = 0,
        fetchOffset: Int = 0,
        includesSubentities: Bool = true
    ) throws {
        self.init(
            entityName: entityName,
            predicate: try PredicateParser.parse(format),
            sortDescriptors: sortDescriptors,
            fetchLimit: fetchLimit,
            fetchOffset: fetchOffset,
            includesSubentities: includesSubentities
        )
    }
}
