import StrataModel
import StrataQuery
import StrataStore
import StrataSQLite

/// A SQLite store that counts how saves reach it (streamed, through an
/// insert feed, or whole) and its reads of objects by ID. Everything is
/// the SQLite store's.
actor StreamCountingStore: InsertStreamingStore {
    let inner: SQLiteStore
    nonisolated let identifier: String
    nonisolated let storeDescription: StoreDescription
    nonisolated let model: ObjectModel
    nonisolated let entityNames: Set<String>
    private(set) var streamedSaves = 0
    private(set) var wholeSaves = 0
    private(set) var snapshotReads = 0

    init(_ inner: SQLiteStore) {
        self.inner = inner
        identifier = inner.identifier
        storeDescription = inner.storeDescription
        model = inner.model
        entityNames = inner.entityNames
    }

    func save(_ changes: StoreChanges, streaming feed: StoreInsertFeed) async throws -> StoreSaveResult {
        streamedSaves += 1
        return try await inner.save(changes, streaming: feed)
    }

    func save(_ changes: StoreChanges) async throws -> StoreSaveResult {
        wholeSaves += 1
        return try await inner.save(changes)
    }

    func fetchSnapshots(_ fetch: ResolvedFetch) async throws -> [Snapshot] { try await inner.fetchSnapshots(fetch) }
    func fetchSnapshotBatches(_ fetch: ResolvedFetch) async throws -> AsyncThrowingStream<[Snapshot], any Error> {
        try await inner.fetchSnapshotBatches(fetch)
    }
    func fetchObjectIDs(_ fetch: ResolvedFetch) async throws -> [ObjectID] { try await inner.fetchObjectIDs(fetch) }
    func count(_ fetch: ResolvedFetch) async throws -> Int { try await inner.count(fetch) }
    func snapshots(for objectIDs: [ObjectID]) async throws -> [Snapshot] {
        snapshotReads += 1
        return try await inner.snapshots(for: objectIDs)
    }
    func destinations(of relationship: String, for objectID: ObjectID) async throws -> [ObjectID] {
        try await inner.destinations(of: relationship, for: objectID)
    }
    func close() async throws { try await inner.close() }
}
