import StrataModel

/// A store that can write a save's inserts while the caller still
/// prepares them: the context hands a large save of new objects over as a
/// ``StoreInsertFeed`` and fills it chunk by chunk (recomputing derived
/// values and validating each chunk), while the store begins its
/// transaction and writes the rows already supplied.
///
/// Contract, beyond ``PersistentStore/save(_:)``'s (all or nothing, the
/// same answers):
/// - `changes` carries no inserts: they are the feed's, in its order, and
///   ``StoreCommit/temporaryIDs`` / ``StoreCommit/insertedIDs`` list them in
///   that order;
/// - streamed inserts carry attribute values only (no relationship): a
///   value naming an object fails the save with
///   ``StrataError/Code/invalidValue``, nothing written;
/// - a feed that fails (``StoreInsertFeed/fail(_:)``) fails the save with
///   its error, nothing written.
public protocol InsertStreamingStore: PersistentStore {
    /// Writes `changes` and the feed's inserts in one transaction, all or
    /// nothing, starting before the feed is complete.
    func save(_ changes: StoreChanges, streaming feed: StoreInsertFeed) async throws -> StoreSaveResult
}
