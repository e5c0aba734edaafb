import Foundation
import StrataModel
import StrataStore

/// The objects both stores of the predicate target hold: values at the
/// edges of their types (nil, zero, negative, extremes, U+0000, accents,
/// case), and links of every kind, some empty.
enum PredicateDataset {
    static func changes() -> StoreChanges {
        let strings = ["", "a", "A", "NUL", "NUL\u{0}x", "Émile", "emile", "b%_*?", "zz"]
        let integers: [Int64] = [0, 1, -1, 3, 32767, -32768, 100, 2]
        let doubles: [Double] = [0, -0.0, 2.5, -1e300, .infinity, 1e-300, 3, 0.1 + 0.2]
        var inserts: [StoreChanges.Insert] = []
        for i in 0..<9 {
            var values: [String: PropertyValue] = [:]
            if i != 8 {
                values["i16"] = .integer(integers[i] % 32768)
                values["i32"] = .integer(integers[i] * 1000)
                values["i64"] = .integer(i == 7 ? Int64.max : integers[i] * 1_000_000_007)
                values["dec"] = .decimal(Decimal(integers[i]) / 4)
                values["dbl"] = .double(doubles[i])
                values["flt"] = .double(Double(Float(doubles[i] == .infinity ? 1 : 0.5 * Double(i))))
                values["flag"] = .boolean(i % 2 == 0)
                values["when"] = .date(Date(timeIntervalSinceReferenceDate: Double(i - 4) * 86_400.5))
                values["blob"] = .binary(Data((0..<UInt8(i)).map { $0 }))
                values["uid"] = .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(i))))
                values["link"] = .uri("https://example.com/\(i)")
            }
            values["str"] = .string(strings[i])
            inserts.append(.init(temporaryID: .temporary(entityName: "Sample"), values: values))
        }
        let authors = (0..<3).map { _ in ObjectID.temporary(entityName: "Author") }
        let books = [ObjectID.temporary(entityName: "Book"), .temporary(entityName: "Book"), .temporary(entityName: "EBook"), .temporary(entityName: "Book")]
        let tags = (0..<2).map { _ in ObjectID.temporary(entityName: "Tag") }
        let chapters = (0..<3).map { _ in ObjectID.temporary(entityName: "Chapter") }
        let names = ["Ann", "bob", "Émile"]
        for (i, id) in authors.enumerated() {
            var values: [String: PropertyValue] = ["name": .string(names[i]), "rating": .double(Double(i) * 1.5)]
            if i > 0 { values["mentor"] = .object(authors[0]) }
            if i == 1 { values["born"] = .date(Date(timeIntervalSinceReferenceDate: -1000)) }
            inserts.append(.init(temporaryID: id, values: values, toMany: ["books": i == 0 ? [books[0], books[2]] : i == 1 ? [books[1]] : []]))
        }
        for (i, id) in books.enumerated() {
            var values: [String: PropertyValue] = ["title": .string(["Dune", "dune", "NUL\u{0}x", "Zed"][i]), "pages": .integer(Int64(i * 150))]
            if i < 3 { values["author"] = .object(authors[i == 1 ? 1 : 0]) }
            if i != 3 { values["price"] = .decimal(Decimal(i * 10 + 5) / 10) }
            if i == 2 { values["fileSize"] = .integer(1 << 40) }
            inserts.append(.init(temporaryID: id, values: values, toMany: [
                "tags": i == 0 ? tags : i == 2 ? [tags[1]] : [],
                "chapters": i == 0 ? [chapters[2], chapters[0], chapters[1]] : [],
            ]))
        }
        for (i, id) in tags.enumerated() {
            inserts.append(.init(temporaryID: id, values: ["name": .string(["sf", "SF"][i])], toMany: ["books": i == 0 ? [books[0]] : [books[0], books[2]]]))
        }
        for (i, id) in chapters.enumerated() {
            inserts.append(.init(temporaryID: id, values: ["title": .string("c\(i)"), "number": .integer(Int64(i)), "book": .object(books[0])]))
        }
        return StoreChanges(inserts: inserts)
    }
}
