import Foundation
import StrataModel
import StrataQuery
import StrataStore

/// An in-memory store whose batched fetches hand over `batchSize`
/// snapshots at a time and wait for the test between batches and before
/// ending, so that a test can act on the context while a fetch is in the
/// middle of its batches. Everything else is the in-memory store's.
///
/// The batches are produced when the fetch asks for them: when it asks for
/// the one after batch `k`, it has registered batch `k`, and ``consumed``
/// yields `k`.
actor SteppedStore: PersistentStore {
    let inner: InMemoryStore
    let batchSize: Int
    nonisolated let identifier: String
    nonisolated let storeDescription: StoreDescription
    nonisolated let model: ObjectModel
    nonisolated let entityNames: Set<String>

    /// The index of each batch the fetch has taken in full, as it asks for
    /// the next batch (or the end).
    nonisolated let consumed: AsyncStream<Int>
    private let consumedContinuation: AsyncStream<Int>.Continuation
    private let gate = Gate()

    init(model: ObjectModel, batchSize: Int) async throws {
        let inner = try await InMemoryStore(description: StoreDescription(url: nil, type: .inMemory), model: model)
        self.inner = inner
        self.batchSize = batchSize
        identifier = inner.identifier
        storeDescription = inner.storeDescription
        self.model = model
        entityNames = inner.entityNames
        (consumed, consumedContinuation) = AsyncStream.makeStream(of: Int.self)
    }

    /// Lets the fetch have its next batch (or its end).
    func step() async { await gate.open() }

    func fetchSnapshotBatches(_ fetch: ResolvedFetch) async throws -> AsyncThrowingStream<[Snapshot], any Error> {
        let all = try await inner.fetchSnapshots(fetch)
        let batches = stride(from: 0, to: all.count, by: batchSize).map { Array(all[$0..<min(all.count, $0 + batchSize)]) }
        let feed = Feed(batches: batches, consumed: consumedContinuation, gate: gate)
        return AsyncThrowingStream(unfolding: { await feed.next() })
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

    /// One fetch's batches, each after the first waiting for the gate.
    private actor Feed {
        let batches: [[Snapshot]]
        let consumed: AsyncStream<Int>.Continuation
        let gate: Gate
        var next = 0

        init(batches: [[Snapshot]], consumed: AsyncStream<Int>.Continuation, gate: Gate) {
            self.batches = batches
            self.consumed = consumed
            self.gate = gate
        }

        func next() async -> [Snapshot]? {
            let index = next
            next += 1
            if index > 0 {
                consumed.yield(index - 1)
                guard await gate.pass() else { return nil }
            }
            return index < batches.count ? batches[index] : nil
        }
    }

    /// Permits handed out by the test; a cancelled waiter gets none.
    private actor Gate {
        private var permits = 0
        private var waiter: CheckedContinuation<Bool, Never>?

        func open() {
            if let waiter {
                self.waiter = nil
                waiter.resume(returning: true)
            } else {
                permits += 1
            }
        }

        /// Whether a permit came (false: the task was cancelled).
        func pass() async -> Bool {
            if permits > 0 {
                permits -= 1
                return true
            }
            return await withTaskCancellationHandler {
                await withCheckedContinuation { waiter = $0 }
            } onCancel: {
                Task { await self.cancelWaiter() }
            }
        }

        private func cancelWaiter() {
            waiter?.resume(returning: false)
            waiter = nil
        }
    }
}
