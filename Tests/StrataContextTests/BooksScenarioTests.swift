import Foundation
import Testing
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataSQLite

/// The seed scenarios of "Linking Data Between Two Core Data Stores" and
/// "Handling Different Data Types", on every kind of store.
@Suite struct BooksScenarioTests {
    private func addBook(_ context: isolated Context, title: String, uuid: UUID = UUID(), pages: Int64 = 100, price: String = "9.99", date: Date? = nil) throws -> ManagedObject {
        let book = try context.insert("Book")
        try book.setValue(.uuid(uuid), forKey: "uuid")
        try book.setValue(.string(title), forKey: "title")
        try book.setValue(.integer(pages), forKey: "pages")
        try book.setValue(.decimal(Decimal(string: price)!), forKey: "price")
        if let date { try book.setValue(.date(date), forKey: "publishDate") }
        return book
    }

    @Test(arguments: ContextFixture.storeKinds)
    func feedbackListFollowsRefresh(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.books(kind, in: directory)
        let context = container.viewContext
        let counts: [Int] = try await context.perform { context in
            let uuid = UUID()
            let book = try self.addBook(context, title: "Le Petit Prince", uuid: uuid)
            try await context.save()
            let initial = try await context.fetchedProperty("feedbackList", of: book).count
            #expect(initial == 0)

            let feedback = try context.insert("Feedback")
            try feedback.setValue(.uuid(uuid), forKey: "bookUUID")
            try feedback.setValue(.integer(5), forKey: "rating")
            try feedback.setValue(.string("Lovely"), forKey: "comment")
            try await context.save()
            // Not updated by the save (Core Data semantics)…
            let beforeRefresh = try await context.fetchedProperty("feedbackList", of: book).count
            // …until the book is refreshed with mergeChanges: true.
            try await context.refresh(book, mergeChanges: true)
            let list = try await context.fetchedProperty("feedbackList", of: book)
            let afterRefresh = list.count
            #expect(list.first?["comment"] == .string("Lovely"))

            try await context.delete(list[0])
            try await context.save()
            try await context.refresh(book, mergeChanges: true)
            let afterDelete = try await context.fetchedProperty("feedbackList", of: book).count
            return [beforeRefresh, afterRefresh, afterDelete]
        }
        #expect(counts == [0, 1, 0])
        try await container.close()
    }

    /// Merging another context's change set invalidates fetched properties
    /// whose target entity changed (a saved change in the same context
    /// does not: see feedbackListFollowsRefresh).
    @Test(arguments: ContextFixture.storeKinds)
    func mergeInvalidatesFetchedProperties(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.books(kind, in: directory)
        let uuid = UUID()
        let reader = container.newBackgroundContext(name: "reader")
        let bookID: ObjectID = try await reader.perform { context in
            let book = try self.addBook(context, title: "Merged", uuid: uuid)
            try await context.save()
            return book.objectID
        }
        let before = try await reader.perform { context in
            try await context.fetchedProperty("feedbackList", of: context.existingObject(with: bookID)).count
        }
        let writer = container.newBackgroundContext(name: "writer")
        let changes = try await writer.perform { context in
            let feedback = try context.insert("Feedback")
            try feedback.setValue(.uuid(uuid), forKey: "bookUUID")
            try feedback.setValue(.integer(3), forKey: "rating")
            return try await context.save()
        }
        try await reader.merge(changes)
        let after = try await reader.perform { context in
            try await context.fetchedProperty("feedbackList", of: context.existingObject(with: bookID)).count
        }
        #expect(before == 0)
        #expect(after == 1)
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func canonicalTitleChangesOnlyAtSave(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.books(kind, in: directory)
        let values: [PropertyValue] = try await container.viewContext.perform { context in
            let book = try self.addBook(context, title: "Crème Brûlée")
            let beforeSave = try book.value(forKey: "canonicalTitle")
            try await context.save()
            let afterSave = try book.value(forKey: "canonicalTitle")
            try book.setValue(.string("Ÿes Änd Nö"), forKey: "title")
            let afterEdit = try book.value(forKey: "canonicalTitle")
            try await context.save()
            let afterSecondSave = try book.value(forKey: "canonicalTitle")
            return [beforeSave, afterSave, afterEdit, afterSecondSave]
        }
        #expect(values == [.null, .string("creme brulee"), .string("creme brulee"), .string("yes and no")])
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func containsCDMatchesCanonicalTitle(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.books(kind, in: directory)
        let context = container.viewContext
        try await context.perform { context in
            for title in ["Crème Brûlée", "CREME caramel", "Creamy", "Le Crémier", "Brûlé", "Naïve Art"] {
                _ = try self.addBook(context, title: title)
            }
            try await context.save()
        }
        let byTitle = try await context.fetchObjectIDs(ContextFixture.request("Book", "title CONTAINS[cd] 'creme'"))
        let byCanonical = try await context.fetchObjectIDs(ContextFixture.request("Book", "canonicalTitle CONTAINS 'creme'"))
        #expect(Set(byTitle) == Set(byCanonical))
        #expect(byTitle.count == 2)
        let brule = try await context.count(ContextFixture.request("Book", "title CONTAINS[cd] 'brule'"))
        #expect(brule == 2)
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func transientAndTransformable(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.books(kind, in: directory)
        let march2024 = Date(timeIntervalSince1970: 1_710_000_000) // 2024-03-09
        let result: [String] = try await container.viewContext.perform { context in
            let book = try self.addBook(context, title: "Dune", date: march2024)
            try book.setTransformable(SampleColor(red: 0.5, green: 0.25, blue: 1), forKey: "coverColor")
            let monthID = try book.value(forKey: "publishMonthID")
            try await context.save()
            let id = book.objectID
            context.reset()
            let again = try await context.existingObject(with: id)
            let color = try again.transformable(forKey: "coverColor") as? SampleColor
            let recomputed = try again.value(forKey: "publishMonthID")
            try again.setValue(.date(Date(timeIntervalSince1970: 1_730_000_000)), forKey: "publishDate") // 2024-10-27
            let afterChange = try again.value(forKey: "publishMonthID")
            return ["\(monthID)", "\(recomputed)", "\(afterChange)", "\(color == SampleColor(red: 0.5, green: 0.25, blue: 1))"]
        }
        #expect(result == ["\"2024003\"", "\"2024003\"", "\"2024010\"", "true"])
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func decimalPricesAreExact(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.books(kind, in: directory)
        let context = container.viewContext
        try await context.perform { context in
            _ = try self.addBook(context, title: "A", price: "0.1")
            _ = try self.addBook(context, title: "B", price: "0.2")
            _ = try self.addBook(context, title: "C", price: "0.3")
            _ = try self.addBook(context, title: "D", price: "12345678901234567890.123456789")
            try await context.save()
        }
        let ids = try await context.fetchObjectIDs(ContextFixture.request("Book", "price == 0.3"))
        #expect(ids.count == 1)
        let sorted = try await context.perform { context in
            try await context.fetch(ContextFixture.request("Book", "price > 0.15", sort: [StrataQuery.SortDescriptor("price", ascending: false)])).map { "\($0["price"])" }
        }
        #expect(sorted == ["12345678901234567890.123456789", "0.3", "0.2"])
        try await container.close()
    }

    @Test func readOnlyBookStoreWithLabelsInASecondStore() async throws {
        let directory = TemporaryDirectory()
        // Ship a Books store…
        let seed = try await PersistentContainer(model: BooksSample.model, storeDescriptions: BooksSample.sqliteStores(in: directory.url), factory: .standard, transformers: BooksSample.transformers)
        let uuid = UUID()
        try await seed.viewContext.perform { context in
            _ = try self.addBook(context, title: "Bundled", uuid: uuid)
            try await context.save()
        }
        try await seed.close()
        let booksFile = directory.url.appendingPathComponent("Books.sqlite")
        let before = try Data(contentsOf: booksFile)

        // …open it read-only, and write labels (feedback) to the other store.
        let container = try await PersistentContainer(model: BooksSample.model, storeDescriptions: BooksSample.sqliteStores(in: directory.url, booksReadOnly: true), factory: .standard, transformers: BooksSample.transformers)
        let context = container.viewContext
        let outcome: [String] = try await context.perform { context in
            let book = try #require(try await context.fetch(ContextFixture.request("Book")).first)
            let label = try context.insert("Feedback")
            try label.setValue(.uuid(uuid), forKey: "bookUUID")
            try label.setValue(.integer(4), forKey: "rating")
            try await context.save()
            try await context.refresh(book, mergeChanges: true)
            let labels = try await context.fetchedProperty("feedbackList", of: book).count
            try book.setValue(.string("Changed"), forKey: "title")
            var refusal = "none"
            do { try await context.save() } catch let error as StrataError { refusal = "\(error.code.rawValue)" }
            context.rollback()
            return ["\(labels)", refusal]
        }
        #expect(outcome == ["1", "134030"])
        try await container.close()
        #expect(try Data(contentsOf: booksFile) == before)
    }
}
