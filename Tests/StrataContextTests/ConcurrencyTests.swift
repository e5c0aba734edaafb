import Foundation
import Testing
import StrataContext
import StrataModel
import StrataQuery
import StrataStore

/// Many tasks, many contexts, the same stores at once. Run under
/// `swift test --sanitize=thread` in CI to catch data races.
@Suite struct ConcurrencyTests {
    static let tasks = 6
    static let incrementsPerTask = 15
    static let insertsPerTask = 20

    @Test(arguments: ContextFixture.storeKinds)
    func noLostUpdatesUnderContention(kind: StoreDescription.StoreType) async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(kind, in: directory)
        let counterID: ObjectID = try await container.viewContext.perform { context in
            let counter = try context.insert("Book")
            try counter.setValue(.string("counter"), forKey: "title")
            try counter.setValue(.integer(1), forKey: "pages")
            try await context.save()
            return counter.objectID
        }

        let conflicts = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<Self.tasks {
                group.addTask {
                    let context = container.newBackgroundContext(name: "worker \(task)")
                    var conflicts = 0
                    for increment in 0..<Self.incrementsPerTask {
                        // Optimistic locking: read, change, save; on a
                        // conflict refresh and try again.
                        while true {
                            do {
                                try await context.perform { context in
                                    let counter = try await context.existingObject(with: counterID)
                                    guard case .integer(let pages) = try counter.value(forKey: "pages") else { return }
                                    try counter.setValue(.integer(pages + 1), forKey: "pages")
                                    let book = try context.insert("Book")
                                    try book.setValue(.string("t\(task)-\(increment)"), forKey: "title")
                                    try await context.save()
                                }
                                break
                            } catch let error as StrataError where error.code == .mergeConflict {
                                conflicts += 1
                                await context.perform { context in
                                    context.rollback()
                                    context.reset()
                                }
                            }
                        }
                    }
                    // Plain inserts, several per save.
                    for batch in 0..<(Self.insertsPerTask / 5) {
                        try await context.perform { context in
                            for i in 0..<5 {
                                let tag = try context.insert("Tag")
                                try tag.setValue(.string("tag-\(task)-\(batch)-\(i)"), forKey: "name")
                            }
                            try await context.save()
                        }
                    }
                    return conflicts
                }
            }
            var total = 0
            for try await conflicts in group { total += conflicts }
            return total
        }

        let check = container.newBackgroundContext()
        let (pages, books, tags): (Int64, Int, Int) = try await check.perform { check in
            let counter = try await check.existingObject(with: counterID)
            guard case .integer(let pages) = counter["pages"] else { return (-1, -1, -1) }
            let books = try await check.count(FetchRequest(entityName: "Book"))
            let tags = try await check.count(FetchRequest(entityName: "Tag"))
            return (pages, books, tags)
        }
        #expect(pages == Int64(1 + Self.tasks * Self.incrementsPerTask), "conflicts retried: \(conflicts)")
        #expect(books == 1 + Self.tasks * Self.incrementsPerTask)
        #expect(tags == Self.tasks * Self.insertsPerTask)
        try await container.close()
    }
}
