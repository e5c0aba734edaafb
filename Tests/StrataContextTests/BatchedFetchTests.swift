import Foundation
import Testing
import StrataContext
import StrataModel
import StrataQuery
import StrataStore

/// A fetch from one store registers each batch of snapshots while the
/// store reads the next; the context may run other work in between.
@Suite struct BatchedFetchTests {
    /// A context over a stepped store holding `count` tags named t000…
    private func context(tags count: Int, batchSize: Int) async throws -> (Context, SteppedStore) {
        let store = try await SteppedStore(model: ContextFixture.library, batchSize: batchSize)
        let context = Context(coordinator: try Coordinator(model: ContextFixture.library, stores: [store]))
        try await context.perform { context in
            for i in 0..<count {
                try context.insert("Tag").setValue(.string(String(format: "t%03d", i)), forKey: "name")
            }
            try await context.save()
            context.reset()
        }
        return (context, store)
    }

    /// Lets every batch after the first go, as soon as the previous one
    /// was handed over.
    private func release(_ store: SteppedStore, batches: Int) -> Task<Void, Never> {
        Task {
            var handedOver = store.handedOver.makeAsyncIterator()
            for _ in 1..<batches {
                _ = await handedOver.next()
                store.step.yield()
            }
        }
    }

    @Test func batchesMakeOneResultInOrderEveryObjectRegistered() async throws {
        let (context, store) = try await context(tags: 25, batchSize: 10)
        let releasing = release(store, batches: 3)
        let request = try ContextFixture.request("Tag", sort: [StrataQuery.SortDescriptor("name", ascending: false)])
        let (names, registered) = try await context.perform { context in
            let objects = try await context.fetch(request)
            return (try objects.map { try $0.value(forKey: "name") }, objects.allSatisfy { context.object(with: $0.objectID) === $0 })
        }
        await releasing.value
        #expect(names == (0..<25).reversed().map { .string(String(format: "t%03d", $0)) })
        #expect(registered)
    }

    /// A reset while the fetch waits for its second batch unregisters the
    /// first batch's objects: the result is made again from every
    /// snapshot, so each object returned is the one the context holds.
    @Test func aResetBetweenBatchesStillReturnsRegisteredObjects() async throws {
        let (context, store) = try await context(tags: 25, batchSize: 10)
        let request = try ContextFixture.request("Tag", sort: [StrataQuery.SortDescriptor("name")])
        let fetching = Task {
            try await context.perform { context in
                let objects = try await context.fetch(request)
                return (objects.map(\.objectID), objects.allSatisfy { context.object(with: $0.objectID) === $0 }, context.registeredObjects.count)
            }
        }
        var handedOver = store.handedOver.makeAsyncIterator()
        #expect(await handedOver.next() == 0)
        // The fetch awaits the second batch: the context runs the reset.
        await context.reset()
        store.step.yield()
        #expect(await handedOver.next() == 1)
        store.step.yield()
        #expect(await handedOver.next() == 2)
        let (ids, registered, count) = try await fetching.value
        #expect(ids.count == 25)
        #expect(Set(ids).count == 25)
        #expect(registered)
        #expect(count == 25)
    }

    /// A fetch cancelled between batches throws; it never returns the
    /// batches it had as if they were the whole result.
    @Test func aFetchCancelledBetweenBatchesThrows() async throws {
        let (context, store) = try await context(tags: 25, batchSize: 10)
        let request = try ContextFixture.request("Tag")
        let fetching = Task {
            try await context.perform { context in try await context.fetch(request).count }
        }
        var handedOver = store.handedOver.makeAsyncIterator()
        #expect(await handedOver.next() == 0)
        fetching.cancel()
        await #expect(throws: CancellationError.self) { _ = try await fetching.value }
    }

    /// Fetches of several SQLite batches in many contexts at once, while
    /// another context saves and the fetching contexts merge what it
    /// saved: every fetch gets every row, in order, each object the one
    /// its context holds (run under the thread sanitizer in CI).
    @Test func manyContextsFetchBatchesWhileAnotherSaves() async throws {
        let directory = TemporaryDirectory()
        let container = try await ContextFixture.library(.sqlite, in: directory)
        let count = 5_000
        try await container.viewContext.perform { context in
            for i in 0..<count {
                let book = try context.insert("Book")
                try book.setValue(.string(String(format: "b%05d", i)), forKey: "title")
            }
            try await context.save()
        }
        let request = try ContextFixture.request("Book", sort: [StrataQuery.SortDescriptor("title")])
        let expected = (0..<count).map { PropertyValue.string(String(format: "b%05d", $0)) }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                let writer = container.newBackgroundContext(name: "writer")
                try await writer.perform { context in
                    for i in 0..<20 {
                        let tag = try context.insert("Tag")
                        try tag.setValue(.string("tag \(i)"), forKey: "name")
                        try await context.save()
                    }
                }
                return true
            }
            for reader in 0..<4 {
                group.addTask {
                    let context = container.newBackgroundContext(name: "reader \(reader)")
                    await context.automaticallyMergeChanges()
                    return try await context.perform { context in
                        for _ in 0..<3 {
                            let objects = try await context.fetch(request)
                            let titles = try objects.map { try $0.value(forKey: "title") }
                            guard titles == expected, objects.allSatisfy({ context.object(with: $0.objectID) === $0 }) else { return false }
                        }
                        return true
                    }
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }
}
