import Foundation
import StrataModel
import StrataStore
import StrataContext

/// The Books & Feedback sample, after Apple's "Linking Data Between Two Core
/// Data Stores" and "Handling Different Data Types in Core Data": `Book`
/// (configuration `Book`) and `Feedback` (configuration `Feedback`) in two
/// stores, linked by the fetched property `feedbackList`.
public enum BooksSample {
    /// The model.
    public static let model = ObjectModel(
        name: "BooksAndFeedback",
        entities: [
            EntityDescription(
                name: "Book",
                attributes: [
                    .attribute("uuid", .uuid),
                    .attribute("title", .string),
                    .attribute("author", .string, optional: true),
                    .attribute("publishDate", .date, optional: true),
                    .attribute("price", .decimal, optional: true),
                    .attribute("pages", .integer32, optional: true),
                    AttributeDescription(name: "canonicalTitle", type: .string, isOptional: true, isDerived: true, derivationExpression: "canonical:(title)"),
                    .attribute("publishMonthID", .string, optional: true, transient: true),
                    AttributeDescription(name: "coverColor", type: .transformable, isOptional: true, valueTransformerName: ColorToDataTransformer.transformerName, customClassName: "SampleColor"),
                ],
                fetchedProperties: [
                    FetchedPropertyDescription(name: "feedbackList", entity: "Feedback", predicate: "bookUUID == $FETCH_SOURCE.uuid"),
                ],
                fetchIndexes: [
                    FetchIndex(name: "byTitle", elements: [.init(property: "title")]),
                    FetchIndex(name: "byPages", elements: [.init(property: "pages")]),
                ],
                uniquenessConstraints: [["uuid"]]
            ),
            EntityDescription(
                name: "Feedback",
                attributes: [
                    .attribute("bookUUID", .uuid),
                    .attribute("rating", .integer16),
                    .attribute("comment", .string, optional: true),
                ],
                fetchIndexes: [FetchIndex(name: "byBook", elements: [.init(property: "bookUUID")])]
            ),
        ],
        configurations: [
            ConfigurationDescription(name: "Book", entities: ["Book"]),
            ConfigurationDescription(name: "Feedback", entities: ["Feedback"]),
        ]
    )

    /// The value transformers the model needs.
    public static var transformers: ValueTransformerRegistry {
        ValueTransformerRegistry([ColorToDataTransformer()])
    }

    /// `publishMonthID` computed in code from `publishDate`, as the sample
    /// does: `year × 1000 + month` (Gregorian calendar, UTC), as text.
    public static let publishMonthID = TransientRule(dependencies: ["publishDate"]) { values in
        guard case .date(let date)? = values["publishDate"] else { return .null }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let components = calendar.dateComponents([.year, .month], from: date)
        guard let year = components.year, let month = components.month else { return .null }
        return .string(String(year * 1000 + month))
    }

    /// The transient rules of the model, keyed by entity and attribute.
    public static var transientRules: [String: [String: TransientRule]] {
        ["Book": ["publishMonthID": publishMonthID]]
    }

    /// Store descriptions for the two SQLite stores in `directory`
    /// (`Books.sqlite`, `Feedback.sqlite`).
    public static func sqliteStores(in directory: URL, booksReadOnly: Bool = false) -> [StoreDescription] {
        [
            StoreDescription(url: directory.appendingPathComponent("Books.sqlite"), type: .sqlite, configuration: "Book", isReadOnly: booksReadOnly),
            StoreDescription(url: directory.appendingPathComponent("Feedback.sqlite"), type: .sqlite, configuration: "Feedback"),
        ]
    }
}
