import StrataModel
import StrataQuery

/// A persistent store: the one interface between contexts and storage.
///
/// Strata ships SQLite, in-memory and binary stores; anything that
/// implements this protocol can be added to a coordinator (a remote store
/// over the network, a store over another database), in the spirit of Core
/// Data's incremental stores. A store is an actor: it owns its storage and
/// serialises access to it.
///
/// Contract:
/// - ``identifier`` is the store's UUID, stable across opens; permanent
///   object IDs carry it (`strata://<identifier>/<Entity>/p<key>`).
/// - Fetches receive a ``ResolvedFetch`` already checked against the model;
///   results honour its predicate, sort keys (ties by primary key), limit
///   and offset, and include subentities when asked, exactly as
///   ``FetchEvaluator`` does.
/// - ``save(_:)`` is all or nothing. When ``StoreChanges/checksVersions`` is
///   set, every update and delete whose expected version differs from the
///   stored one makes the store write nothing and answer
///   ``StoreSaveResult/conflicts(_:)`` listing every such object; a broken
///   uniqueness constraint answers ``StoreSaveResult/constraintConflicts(_:)``.
///   Versions start at 1 and grow by 1 at every saved update.
/// - A read-only store answers every save with a ``StrataError`` before
///   touching anything.
/// - Errors are ``StrataError``s: 134080 to open, 134030 to save, 134100 when
///   the model does not fit the store, 134090 when busy past the deadline.
public protocol PersistentStore: Actor {
    /// The store's UUID, stable across opens.
    nonisolated var identifier: String { get }
    /// How the store was opened.
    nonisolated var storeDescription: StoreDescription { get }
    /// The model the store serves.
    nonisolated var model: ObjectModel { get }
    /// The entities the store holds (its configuration's members and their subentities).
    nonisolated var entityNames: Set<String> { get }

    /// Snapshots of the objects a fetch selects, in order.
    func fetchSnapshots(_ fetch: ResolvedFetch) async throws -> [Snapshot]
    /// The snapshots of ``fetchSnapshots(_:)``, in the same order, in
    /// batches as the store reads them, so that the caller can register the
    /// first objects while the store reads the next (no batch is empty).
    /// What the store can check without reading (a closed store, an entity
    /// it does not hold, a fetch it cannot run) is thrown before the stream
    /// is returned; a failure while reading ends the stream with that
    /// error. A caller that stops iterating stops the reading. The default
    /// implementation hands over ``fetchSnapshots(_:)``'s result as one batch.
    func fetchSnapshotBatches(_ fetch: ResolvedFetch) async throws -> AsyncThrowingStream<[Snapshot], any Error>
    /// IDs of the objects a fetch selects, in order.
    func fetchObjectIDs(_ fetch: ResolvedFetch) async throws -> [ObjectID]
    /// How many objects a fetch selects (limit and offset applied).
    func count(_ fetch: ResolvedFetch) async throws -> Int
    /// The current snapshots of these objects; objects that no longer exist are left out.
    func snapshots(for objectIDs: [ObjectID]) async throws -> [Snapshot]
    /// The destinations of a to-many relationship of one object, in order
    /// for ordered relationships, else by primary key.
    func destinations(of relationship: String, for objectID: ObjectID) async throws -> [ObjectID]
    /// Writes one change set, all or nothing.
    func save(_ changes: StoreChanges) async throws -> StoreSaveResult
    /// Flushes and releases the storage; later calls fail.
    func close() async throws
}

extension PersistentStore {
    /// ``fetchSnapshots(_:)``'s result as a stream of one batch (none when
    /// it is empty).
    public func fetchSnapshotBatches(_ fetch: ResolvedFetch) async throws -> AsyncThrowingStream<[Snapshot], any Error> {
        .oneBatch(try await fetchSnapshots(fetch))
    }

    /// Whether the store refuses writes.
    public nonisolated var isReadOnly: Bool { storeDescription.isReadOnly }
    /// The configuration the store holds.
    public nonisolated var configurationName: String? { storeDescription.configuration }
}

extension AsyncThrowingStream where Element == [Snapshot], Failure == any Error {
    /// A finished stream of `snapshots` as one batch (none when empty).
    package static func oneBatch(_ snapshots: [Snapshot]) -> Self {
        AsyncThrowingStream { continuation in
            if !snapshots.isEmpty { continuation.yield(snapshots) }
            continuation.finish()
        }
    }
}
