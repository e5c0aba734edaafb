import Foundation
import StrataModel
import StrataQuery

/// The graph the predicate target runs against: every attribute type,
/// to-one, to-many, ordered and many-to-many relationships, a subentity.
enum FuzzModel {
    static let model: ObjectModel = {
        func optional(_ name: String, _ type: AttributeType) -> AttributeDescription {
            AttributeDescription(name: name, type: type, isOptional: true)
        }
        let sample = EntityDescription(
            name: "Sample",
            attributes: [
                optional("i16", .integer16), optional("i32", .integer32), optional("i64", .integer64),
                optional("dec", .decimal), optional("dbl", .double), optional("flt", .float),
                optional("str", .string), optional("flag", .boolean), optional("when", .date),
                optional("blob", .binary), optional("uid", .uuid), optional("link", .uri),
            ]
        )
        let author = EntityDescription(
            name: "Author",
            attributes: [optional("name", .string), optional("born", .date), optional("rating", .double)],
            relationships: [
                RelationshipDescription(name: "books", destination: "Book", inverse: "author", toMany: true),
                RelationshipDescription(name: "mentor", destination: "Author"),
            ]
        )
        let book = EntityDescription(
            name: "Book",
            attributes: [optional("title", .string), optional("pages", .integer32), optional("price", .decimal)],
            relationships: [
                RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", toMany: true),
                RelationshipDescription(name: "chapters", destination: "Chapter", inverse: "book", toMany: true, ordered: true),
            ]
        )
        let ebook = EntityDescription(name: "EBook", parent: "Book", attributes: [optional("fileSize", .integer64)])
        let tag = EntityDescription(
            name: "Tag",
            attributes: [optional("name", .string)],
            relationships: [RelationshipDescription(name: "books", destination: "Book", inverse: "tags", toMany: true)]
        )
        let chapter = EntityDescription(
            name: "Chapter",
            attributes: [optional("title", .string), optional("number", .integer16)],
            relationships: [RelationshipDescription(name: "book", destination: "Book", inverse: "chapters")]
        )
        return ObjectModel(name: "Fuzz", entities: [sample, author, book, ebook, tag, chapter])
    }()

    /// The variables every predicate may use.
    static let variables: [String: VariableValue] = [
        "S": .value(.string("NUL\u{0}x")),
        "T": .value(.string("Émile")),
        "N": .value(.integer(3)),
        "X": .value(.double(2.5)),
        "D": .value(.date(Date(timeIntervalSinceReferenceDate: 0))),
        "U": .value(.uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)))),
        "B": .value(.boolean(true)),
        "L": .list([.integer(1), .integer(2), .string("b"), .null]),
        "R": .list([.integer(-5), .integer(10)]),
    ]
}
