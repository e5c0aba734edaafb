import Foundation
import Testing
import StrataContext
import StrataModel
import StrataQuery
import StrataStore

@Suite struct ContextBehaviourTests {
    private func author(_ context: isolated Context, _ name: String) throws -> ManagedObject {
        let author = try context.insert("Author")
        try author.setValue(.string(name), forKey: "name")
        return author
    }

    private func book(_ context: isolated Context, _ title: String, by author: ManagedObject? = nil, pages: Int64? = nil) throws -> ManagedObject {
        let book = try context.insert("Book")
        try book.setValue(.string(title), forKey: "title")
        if let pages { try book.setValue(.integer(pages), forKey: "pages") }
        if let author { try book.setValue(.object(author.objectID), forKey: "author") }
        return book
    }

    @Test(arguments: ContextFixture.storeKinds)
    func insertSaveFetchAndPermanentIDs(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let result: [String] = try await container.viewContext.perform { context in
            let tolkien = try self.author(context, "Tolkien")
            let hobbit = try self.book(context, "The Hobbit", by: tolkien, pages: 310)
            _ = try self.book(context, "The Silmarillion", by: tolkien, pages: 365)
            #expect(hobbit.objectID.isTemporary)
            let pending = context.hasChanges
            #expect(pending)
            let changes = try await context.save()
            #expect(!hobbit.objectID.isTemporary)
            #expect(hobbit.objectID.uriRepresentation.hasPrefix("strata://"))
            #expect(changes.inserted.count == 3)
            let stillPending = context.hasChanges
            #expect(!stillPending)
            // The inverse was maintained and persisted.
            context.reset()
            let authors = try await context.fetch(ContextFixture.request("Author"))
            let books = try await context.destinations(of: authors[0], "books")
            return books.map { "\($0["title"])" }.sorted()
        }
        #expect(result == ["\"The Hobbit\"", "\"The Silmarillion\""])
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func fetchIncludesPendingChanges(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let titles: [[String]] = try await container.viewContext.perform { context in
            for (title, pages) in [("A", 100), ("B", 200), ("C", 300)] { _ = try self.book(context, title, pages: Int64(pages)) }
            try await context.save()
            let request = try ContextFixture.request("Book", "pages >= 200", sort: [StrataQuery.SortDescriptor("title")])
            let saved = try await context.fetch(request).map { "\($0["title"])" }
            // Unsaved: a new match, an update out of range, an update into range, a delete.
            _ = try self.book(context, "D", pages: 250)
            let all = try await context.fetch(ContextFixture.request("Book", sort: [StrataQuery.SortDescriptor("title")]))
            try all[0].setValue(.integer(999), forKey: "pages") // A now matches
            try all[1].setValue(.integer(1), forKey: "pages")   // B no longer
            try await context.delete(all[2])                     // C deleted
            let pending = try await context.fetch(request).map { "\($0["title"])" }
            let count = try await context.count(request)
            return [saved, pending, ["\(count)"]]
        }
        #expect(titles == [["\"B\"", "\"C\""], ["\"A\"", "\"D\""], ["2"]])
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func validationReportsEveryProblem(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let codes: [Int] = try await container.viewContext.perform { context in
            var codes: [Int] = []
            let untitled = try context.insert("Book")
            do { try await context.save() } catch let error as StrataError { codes.append(error.code.rawValue) }
            try untitled.setValue(.string("ok"), forKey: "title")
            try untitled.setValue(.integer(9000), forKey: "pages")
            do { try await context.save() } catch let error as StrataError { codes.append(error.code.rawValue) }
            try untitled.setValue(.integer(0), forKey: "pages")
            try untitled.setValue(.string("12345"), forKey: "isbn")
            let another = try context.insert("Book")
            _ = another
            do { try await context.save() } catch let error as StrataError {
                codes.append(error.code.rawValue)
                codes.append(error.details.count)
            }
            // Integer width is checked when the value is set.
            do { try untitled.setValue(.integer(70_000), forKey: "pages") } catch let error as StrataError { codes.append(error.code.rawValue) }
            // Nothing was written.
            context.rollback()
            codes.append(try await context.count(ContextFixture.request("Book")))
            return codes
        }
        #expect(codes == [1570, 1610, 1560, 3, 140104, 0])
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func deleteRules(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let counts: [Int] = try await container.viewContext.perform { context in
            let author = try self.author(context, "Le Guin")
            let earthsea = try self.book(context, "Earthsea", by: author)
            let chapter = try context.insert("Chapter")
            try chapter.setValue(.string("One"), forKey: "name")
            try chapter.setValue(.object(earthsea.objectID), forKey: "book")
            let fan = try context.insert("Fan")
            try fan.setValue(.string("Ann"), forKey: "name")
            try fan.setValue(.object(author.objectID), forKey: "favourite")
            let award = try context.insert("Award")
            try award.setValue(.string("Hugo"), forKey: "name")
            try award.setValue(.object(author.objectID), forKey: "winner")
            try await context.save()

            var results: [Int] = []
            // Deny: refused, nothing changes.
            do { try await context.delete(author) } catch let error as StrataError { results.append(error.code.rawValue) }
            results.append(context.hasChanges ? 1 : 0)
            // Remove the award; now cascade (books → chapters) and nullify (fans).
            try await context.delete(award)
            try await context.delete(author)
            try await context.save()
            context.reset()
            for entity in ["Author", "Book", "Chapter", "Fan", "Award"] {
                results.append(try await context.count(ContextFixture.request(entity)))
            }
            let ann = try await context.fetch(ContextFixture.request("Fan"))
            results.append(ann.first?["favourite"] == .null ? 1 : 0)
            return results
        }
        #expect(counts == [1600, 0, 0, 0, 0, 1, 0, 1])
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func orderedAndManyToMany(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let result: [String] = try await container.viewContext.perform { context in
            let book = try self.book(context, "Order")
            var chapters: [ObjectID] = []
            for name in ["3", "1", "2"] {
                let chapter = try context.insert("Chapter")
                try chapter.setValue(.string(name), forKey: "name")
                chapters.append(chapter.objectID)
            }
            try book.setDestinations(chapters, forKey: "chapters")
            let tag = try context.insert("Tag")
            try tag.setValue(.string("fantasy"), forKey: "name")
            try tag.addDestination(book.objectID, forKey: "books")
            try await context.save()
            let bookID = book.objectID
            context.reset()
            let again = try await context.existingObject(with: bookID)
            let names = try await context.destinations(of: again, "chapters").map { "\($0["name"])" }
            let tags = try await context.destinations(of: again, "tags").map { "\($0["name"])" }
            return names + tags
        }
        #expect(result == ["\"3\"", "\"1\"", "\"2\"", "\"fantasy\""])
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func rollbackAndRefresh(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let result: [String] = try await container.viewContext.perform { context in
            let saved = try self.book(context, "Saved")
            try await context.save()
            try saved.setValue(.string("Edited"), forKey: "title")
            _ = try self.book(context, "Unsaved")
            context.rollback()
            let afterRollback = "\(saved["title"])"
            let count = try await context.count(ContextFixture.request("Book"))
            try saved.setValue(.string("Edited again"), forKey: "title")
            try await context.refresh(saved, mergeChanges: true)
            let merged = "\(saved["title"])"
            try await context.refresh(saved, mergeChanges: false)
            let fault = saved.isFault
            try await context.load(saved)
            return [afterRollback, "\(count)", merged, "\(fault)", "\(saved["title"])"]
        }
        #expect(result == ["\"Saved\"", "1", "\"Edited again\"", "true", "\"Saved\""])
        try await container.close()
    }

    @Test(arguments: ContextFixture.storeKinds)
    func uniquenessConstraintAndUpsert(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let context = container.viewContext
        let result: [Int] = try await context.perform { context in
            let tag = try context.insert("Tag")
            try tag.setValue(.string("sf"), forKey: "name")
            try await context.save()
            let duplicate = try context.insert("Tag")
            try duplicate.setValue(.string("sf"), forKey: "name")
            var codes: [Int] = []
            do { try await context.save() } catch let error as StrataError { codes.append(error.code.rawValue) }
            context.setMergePolicy(.mergeByPropertyObjectTrump)
            try await context.save()
            codes.append(duplicate.objectID == tag.objectID ? 1 : 0)
            codes.append(try await context.count(ContextFixture.request("Tag")))
            return codes
        }
        #expect(result == [133021, 1, 1])
        try await container.close()
    }
}
