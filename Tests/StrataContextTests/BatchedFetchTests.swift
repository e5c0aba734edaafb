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

    /// Lets the fetch go on each time it has taken a batch, `batches` times
    /// (the last lets it see the end of the stream).
    private func release(_ store: SteppedStore, batches: Int) -> Task<Void, Never> {
        Task {
            var consumed = store.consumed.makeAsyncIterator()
            for _ in 0..<batches {
                _ = await consumed.next()
                await store.step()
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

    /// A reset while the fetch waits for the store, after batch `resetAfter`
    /// was registered, unregisters what it registered so far: the result is
    /// made again from every snapshot, so each object returned is the one
    /// the context holds. After the last batch the fetch still waits for
    /// the end of the stream: a reset then is no different.
    @Test(arguments: [(25, 0), (25, 2), (8, 0)])
    func aResetWhileTheFetchAwaitsTheStoreStillReturnsRegisteredObjects(tags: Int, resetAfter: Int) async throws {
        let (context, store) = try await context(tags: tags, batchSize: 10)
        let batches = (tags + 9) / 10
        let request = try ContextFixture.request("Tag", sort: [StrataQuery.SortDescriptor("name")])
        let fetching = Task {
            try await context.perform { context in
                let objects = try await context.fetch(request)
                return (objects.map(\.objectID), objects.allSatisfy { context.object(with: $0.objectID) === $0 }, context.registeredObjects.count)
            }
        }
        var consumed = store.consumed.makeAsyncIterator()
        for batch in 0..<batches {
            #expect(await consumed.next() == batch)
            if batch == resetAfter {
                #expect(await context.perform { $0.registeredObjects.count } == min(tags, 10 * (batch + 1)))
                await context.reset()
            }
            await store.step()
        }
        let (ids, registered, count) = try await fetching.value
        #expect(ids.count == tags)
        #expect(Set(ids).count == tags)
        #expect(registered)
        #expect(count == tags)
    }

    /// A fetch cancelled between batches throws; it never returns the
    /// batches it had as if they were the whole result.
    @Test func aFetchCancelledBetweenBatchesThrows() async throws {
        let (context, store) = try await context(tags: 25, batchSize: 10)
        let request = try ContextFixture.request("Tag")
        let fetching = Task {
            try await context.perform { context in try await context.fetch(request).count }
        }
        var consumed = store.consumed.makeAsyncIterator()
        #expect(await consumed.next() == 0)
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
