import Foundation
import StrataModel
import StrataQuery

/// A store that keeps everything in memory: nothing is written anywhere,
/// and everything is gone when it closes.
///
/// Rows live per entity hierarchy, keyed by primary key (one counter per
/// hierarchy, never reused); relationships are stored once per pair (see
/// ``MemoryLayout``). Fetches run the in-memory ``FetchEvaluator``, whose
/// results match the SQLite store's SQL exactly. Saves are all or nothing.
/// The logic is ``MemoryStorage``'s, shared with ``BinaryStore``.
public actor InMemoryStore: PersistentStore {
    /// A new UUID at every open: an in-memory store is never reopened.
    public nonisolated let identifier: String
    /// How the store was opened.
    public nonisolated let storeDescription: StoreDescription
    /// The model the store serves.
    public nonisolated let model: ObjectModel
    /// The configuration's entities and their subentities.
    public nonisolated let entityNames: Set<String>

    var storage: MemoryStorage
    private var isClosed = false

    /// Opens an empty store for the description's configuration. Fails with
    /// ``StrataError/Code/modelInvalid`` when a uniqueness constraint names
    /// something that is not a persisted attribute or to-one relationship.
    public init(description: StoreDescription, model: ObjectModel) async throws {
        let identifier = UUID().uuidString
        let entityNames = StoreOpening.entityNames(configuration: description.configuration, model: model)
        self.identifier = identifier
        self.storeDescription = description
        self.model = model
        self.entityNames = entityNames
        self.storage = MemoryStorage(identifier: identifier, layout: try MemoryLayout(model: model, entityNames: entityNames))
    }

    /// Snapshots of the objects a fetch selects, in order.
    public func fetchSnapshots(_ fetch: ResolvedFetch) async throws -> [Snapshot] {
        try checkOpen()
        return try storage.fetchSnapshots(fetch)
    }

    /// IDs of the objects a fetch selects, in order.
    public func fetchObjectIDs(_ fetch: ResolvedFetch) async throws -> [ObjectID] {
        try checkOpen()
        return try storage.fetchObjectIDs(fetch)
    }

    /// How many objects a fetch selects (limit and offset applied).
    public func count(_ fetch: ResolvedFetch) async throws -> Int {
        try checkOpen()
        return try storage.count(fetch)
    }

    /// The current snapshots of these objects, in the order asked; objects
    /// that do not exist are left out.
    public func snapshots(for objectIDs: [ObjectID]) async throws -> [Snapshot] {
        try checkOpen()
        return storage.snapshots(for: objectIDs)
    }

    /// The destinations of a to-many relationship of one object, in order
    /// for ordered relationships, else by primary key. Fails with 133000
    /// when the object does not exist.
    public func destinations(of relationship: String, for objectID: ObjectID) async throws -> [ObjectID] {
        try checkOpen()
        return try storage.destinations(of: relationship, for: objectID)
    }

    /// Writes one change set, all or nothing. A read-only store refuses
    /// every save with 134030.
    public func save(_ changes: StoreChanges) async throws -> StoreSaveResult {
        try checkOpen()
        guard !storeDescription.isReadOnly else {
            throw StrataError(.storeSave, "store \(storeDescription.displayName) is read-only: saves are refused")
        }
        return try storage.save(changes)
    }

    /// Drops every row; later calls fail with 134080.
    public func close() async throws {
        isClosed = true
        storage = MemoryStorage(identifier: identifier, layout: storage.layout)
    }

    func checkOpen() throws(StrataError) {
        if isClosed {
            throw StrataError(.storeOpen, "store \(storeDescription.displayName) is closed")
        }
    }
}
