import StrataModel
import StrataQuery

/// PLACEHOLDER: being written. The memory store.
public actor InMemoryStore: PersistentStore {
    public nonisolated let identifier: String = ""
    public nonisolated let storeDescription: StoreDescription
    public nonisolated let model: ObjectModel
    public nonisolated let entityNames: Set<String> = []

    public init(description: StoreDescription, model: ObjectModel) async throws {
        self.storeDescription = description
        self.model = model
        throw StrataError(.unsupported, "memory store not implemented yet")
    }

    public func fetchSnapshots(_ fetch: ResolvedFetch) async throws -> [Snapshot] { [] }
    public func fetchObjectIDs(_ fetch: ResolvedFetch) async throws -> [ObjectID] { [] }
    public func count(_ fetch: ResolvedFetch) async throws -> Int { 0 }
    public func snapshots(for objectIDs: [ObjectID]) async throws -> [Snapshot] { [] }
    public func destinations(of relationship: String, for objectID: ObjectID) async throws -> [ObjectID] { [] }
    public func save(_ changes: StoreChanges) async throws -> StoreSaveResult { .committed(StoreCommit()) }
    public func close() async throws {}
}
