import Foundation
import StrataModel
import StrataQuery
import StrataStore

/// An in-memory store whose batched fetches hand over `batchSize`
/// snapshots at a time and wait for the test between batches, so that a
/// test can act on the context while a fetch is in the middle of its
/// batches. Everything else is the in-memory store's.
actor SteppedStore: PersistentStore {
    let inner: InMemoryStore
    let batchSize: Int
    nonisolated let identifier: String
    nonisolated let storeDescription: StoreDescription
    nonisolated let model: ObjectModel
    nonisolated let entityNames: Set<String>

    /// One element each time a batch was handed over: its index.
    nonisolated let handedOver: AsyncStream<Int>
    private let handedOverContinuation: AsyncStream<Int>.Continuation
    /// The test yields once to let each batch after the first go.
    private let steps: AsyncStream<Void>
    /// Lets the next batch go.
    nonisolated let step: AsyncStream<Void>.Continuation

    init(model: ObjectModel, batchSize: Int) async throws {
        let inner = try await InMemoryStore(description: StoreDescription(url: nil, type: .inMemory), model: model)
        self.inner = inner
        self.batchSize = batchSize
        identifier = inner.identifier
        storeDescription = inner.storeDescription
        self.model = model
        entityNames = inner.entityNames
        (handedOver, handedOverContinuation) = AsyncStream.makeStream(of: Int.self)
        (steps, step) = AsyncStream.makeStream(of: Void.self)
    }

    func fetchSnapshotBatches(_ fetch: ResolvedFetch) async throws -> AsyncThrowingStream<[Snapshot], any Error> {
        let all = try await inner.fetchSnapshots(fetch)
        let (size, steps, handedOver) = (batchSize, steps, handedOverContinuation)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [Snapshot].self, throwing: (any Error).self)
        let feeding = Task {
            var gate = steps.makeAsyncIterator()
            for (index, start) in stride(from: 0, to: all.count, by: size).enumerated() {
                if index > 0, await gate.next() == nil { break }
                continuation.yield(Array(all[start..<min(all.count, start + size)]))
                handedOver.yield(index)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in feeding.cancel() }
        return stream
    }

    func fetchSnapshots(_ fetch: ResolvedFetch) async throws -> [Snapshot] { try await inner.fetchSnapshots(fetch) }
    func fetchObjectIDs(_ fetch: ResolvedFetch) async throws -> [ObjectID] { try await inner.fetchObjectIDs(fetch) }
    func count(_ fetch: ResolvedFetch) async throws -> Int { try await inner.count(fetch) }
    func snapshots(for objectIDs: [ObjectID]) async throws -> [Snapshot] { try await inner.snapshots(for: objectIDs) }
    func destinations(of relationship: String, for objectID: ObjectID) async throws -> [ObjectID] {
        try await inner.destinations(of: relationship, for: objectID)
    }
    func save(_ changes: StoreChanges) async throws -> StoreSaveResult { try await inner.save(changes) }
    func close() async throws { try await inner.close() }
}
