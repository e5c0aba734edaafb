extension RelationshipDescription {
    /// A to-one relationship, for models written in Swift:
    /// `.toOne("author", "Author", inverse: "books")`.
    public static func toOne(
        _ name: String,
        _ destination: String,
        inverse: String? = nil,
        optional: Bool = true,
        deleteRule: DeleteRule = .nullify
    ) -> RelationshipDescription {
        RelationshipDescription(name: name, destination: destination, inverse: inverse, optional: optional, deleteRule: deleteRule)
    }

    /// A to-many relationship, for models written in Swift:
    /// `.toMany("books", "Book", inverse: "author", deleteRule: .cascade)`.
    /// `maxCount` 0 means no maximum.
    public static func toMany(
        _ name: String,
        _ destination: String,
        inverse: String? = nil,
        ordered: Bool = false,
        deleteRule: DeleteRule = .nullify,
        minCount: Int = 0,
        maxCount: Int = 0
    ) -> RelationshipDescription {
        RelationshipDescription(
            name: name,
            destination: destination,
            inverse: inverse,
            toMany: true,
            ordered: ordered,
            minCount: minCount,
            maxCount: maxCount,
            deleteRule: deleteRule
        )
    }
}
