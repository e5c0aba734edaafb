/// A fetch index: an ordered list of properties the store indexes together.
public struct FetchIndex: Sendable, Hashable {
    /// One property of the index.
    public struct Element: Sendable, Hashable {
        /// The indexed property's name.
        public var property: String
        /// `true` for ascending order.
        public var ascending: Bool
        /// Xcode's index type (`Binary` or `R-Tree`).
        public var kind: String

        /// Creates an element.
        public init(property: String, ascending: Bool = true, kind: String = "Binary") {
            self.property = property
            self.ascending = ascending
            self.kind = kind
        }
    }

    /// The index's name (generated for legacy compound indexes).
    public var name: String
    /// The indexed properties, in order.
    public var elements: [Element]

    /// Creates an index.
    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}
