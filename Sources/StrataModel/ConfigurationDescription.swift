/// A named configuration: the set of entities one store holds.
public struct ConfigurationDescription: Sendable, Hashable {
    /// The configuration's name.
    public var name: String
    /// The member entities' names, as written.
    public var entityNames: [String]

    /// Creates a configuration.
    public init(name: String, entities: [String]) {
        self.name = name
        self.entityNames = entities
    }
}
