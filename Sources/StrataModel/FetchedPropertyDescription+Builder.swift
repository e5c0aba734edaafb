extension FetchedPropertyDescription {
    /// A fetched property, for models written in Swift:
    /// `.fetched("sameAuthor", "Book", predicate: "author == $FETCH_SOURCE.author")`.
    public static func fetched(_ name: String, _ entity: String, predicate: String? = nil) -> FetchedPropertyDescription {
        FetchedPropertyDescription(name: name, entity: entity, predicate: predicate)
    }
}
