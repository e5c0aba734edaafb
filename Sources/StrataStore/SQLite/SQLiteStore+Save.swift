import GRDB
import StrataModel
import StrataQuery

extension SQLiteStore {
    /// Writes one change set in one `BEGIN IMMEDIATE` transaction, all or
    /// nothing (see ``SQLiteSaveTransaction`` for the order of the steps).
    ///
    /// - A read-only store throws 134030 before touching anything; a closed
    ///   one 134080.
    /// - Values are checked against their attributes before the transaction
    ///   starts (``StrataError/Code/invalidValue``: an integer that does
    ///   not fit its width, a value of the wrong kind, NaN, an entity the
    ///   store does not hold); references to other stores' objects are
    ///   133010.
    /// - A to-one value or to-many destination naming an object of this
    ///   store that does not exist (deleted meanwhile or by this save, a
    ///   made-up primary key) throws 133000
    ///   (``StrataError/Code/objectNotFound``: "`Entity.relationship` of
    ///   `id` points to `missing id`, which no longer exists") and writes
    ///   nothing. The check is one batched query per referenced table, made
    ///   only when the save points to saved objects.
    /// - With ``StoreChanges/checksVersions``, any update or delete whose row
    ///   is at another version, or gone (current version 0), answers
    ///   `.conflicts` with the current snapshots and writes nothing. Without
    ///   it, an update or delete of a row that no longer exists does nothing
    ///   (and the update has no entry in ``StoreCommit/versions``).
    /// - A broken uniqueness constraint answers `.constraintConflicts` (every
    ///   one found) and writes nothing.
    /// - Other SQLite failures throw 134030 naming the store and the SQLite
    ///   error; a lock held past the busy timeout throws 134090.
    public func save(_ changes: StoreChanges) async throws -> StoreSaveResult {
        if storeDescription.isReadOnly {
            throw StrataError(.storeSave, "store \(path) is read-only: it refuses every save")
        }
        let database = try openDatabase()
        guard !changes.isEmpty else { return .committed(StoreCommit()) }
        let mapping = self.mapping
        let identifier = self.identifier
        let path = self.path
        do {
            return try await database.writeWithoutTransaction { db in
                // Checking and encoding happen on the writer's queue before
                // the transaction begins: no lock is held while they run.
                var transaction = try SQLiteSaveTransaction(changes: changes, mapping: mapping, storeIdentifier: identifier, path: path)
                return try transaction.run(db)
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw strataError(error, failure: .storeSave, operation: "save")
        }
    }
}
