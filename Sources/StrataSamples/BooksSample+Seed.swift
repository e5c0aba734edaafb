import Foundation
import StrataContext
import StrataModel

extension BooksSample {
    /// One book of the seed.
    struct SeedBook {
        var number: Int
        var title: String
        var author: String
        var published: String
        var price: String
        var pages: Int64
        var feedback: [(rating: Int64, comment: String)]
    }

    /// A dozen books with their feedback, so that a fresh sample server has
    /// something to show.
    static let seedBooks: [SeedBook] = [
        SeedBook(number: 1, title: "The River at Dusk", author: "Ann Lee", published: "2019-03-14", price: "12.50", pages: 320,
                 feedback: [(5, "Read it in one night."), (4, "Slow start, wonderful ending.")]),
        SeedBook(number: 2, title: "Salt and Iron", author: "Tomás Reyes", published: "2021-09-02", price: "18.00", pages: 488,
                 feedback: [(4, "Dense but rewarding.")]),
        SeedBook(number: 3, title: "A Field Guide to Clouds", author: "Mira Okafor", published: "2016-05-20", price: "24.95", pages: 212,
                 feedback: [(5, "Beautiful plates."), (5, "My daughter loves it."), (3, "Wish it covered more of the tropics.")]),
        SeedBook(number: 4, title: "The Quiet Engine", author: "Jonas Berg", published: "2023-01-11", price: "15.99", pages: 356,
                 feedback: [(2, "Not for me."), (4, "Clever plot.")]),
        SeedBook(number: 5, title: "Letters from Lisbon", author: "Inês Duarte", published: "2012-11-30", price: "9.99", pages: 264,
                 feedback: [(5, "A small gem.")]),
        SeedBook(number: 6, title: "Winter Orchard", author: "Ann Lee", published: "2022-12-01", price: "14.00", pages: 298,
                 feedback: [(4, "As good as her first.")]),
        SeedBook(number: 7, title: "Practical Glassblowing", author: "Hana Sato", published: "2018-07-07", price: "32.00", pages: 176,
                 feedback: [(5, "Clear instructions."), (4, "Good photos.")]),
        SeedBook(number: 8, title: "The Cartographer's Daughter", author: "Elena Varga", published: "2020-04-18", price: "16.50", pages: 412,
                 feedback: [(3, "Too long."), (5, "Unforgettable characters.")]),
        SeedBook(number: 9, title: "Night Trains of Europe", author: "Piotr Nowak", published: "2017-10-09", price: "21.00", pages: 240,
                 feedback: [(4, "Makes you want to travel.")]),
        SeedBook(number: 10, title: "Bread, Slowly", author: "Claire Dubois", published: "2015-02-25", price: "27.50", pages: 198,
                 feedback: [(5, "The sourdough chapter alone is worth it.")]),
        SeedBook(number: 11, title: "Small Gods of the Harbour", author: "Rory Byrne", published: "2024-06-13", price: "13.99", pages: 302,
                 feedback: []),
        SeedBook(number: 12, title: "An Atlas of Lost Rivers", author: "Mira Okafor", published: "2021-03-03", price: "29.00", pages: 284,
                 feedback: [(4, "Fascinating maps."), (5, "A new favourite.")]),
    ]

    /// The fixed UUID of seed book `number`: a second seeding of the same
    /// stores clashes with the first on `Book.uuid` and writes nothing.
    static func seedUUID(_ number: Int) -> UUID {
        UUID(uuidString: String(format: "5EED0000-0000-4000-8000-%012d", number)) ?? UUID()
    }

    /// Writes the seed books, then their feedback, through `context`; does
    /// nothing when the books are there already (another process seeded
    /// the same stores first): the books' save fails on their unique UUIDs
    /// before any feedback is written. Returns whether it seeded.
    @discardableResult
    public static func seed(_ context: Context) async throws -> Bool {
        try await context.perform { context in
            let dates = ISO8601DateFormatter()
            dates.formatOptions = [.withFullDate]
            for book in seedBooks {
                let object = try context.insert("Book")
                try object.setValue(.uuid(seedUUID(book.number)), forKey: "uuid")
                try object.setValue(.string(book.title), forKey: "title")
                try object.setValue(.string(book.author), forKey: "author")
                if let date = dates.date(from: book.published) { try object.setValue(.date(date), forKey: "publishDate") }
                if let price = Decimal(string: book.price) { try object.setValue(.decimal(price), forKey: "price") }
                try object.setValue(.integer(book.pages), forKey: "pages")
            }
            do {
                try await context.save()
            } catch let error as StrataError where error.code == .constraintConflict {
                context.reset()
                return false
            }
            for book in seedBooks {
                for entry in book.feedback {
                    let feedback = try context.insert("Feedback")
                    try feedback.setValue(.uuid(seedUUID(book.number)), forKey: "bookUUID")
                    try feedback.setValue(.integer(entry.rating), forKey: "rating")
                    try feedback.setValue(.string(entry.comment), forKey: "comment")
                }
            }
            try await context.save()
            return true
        }
    }
}
