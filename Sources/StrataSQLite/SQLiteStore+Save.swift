import Foundation
import GRDB
import GRDBSQLite
import StrataModel
import StrataStore
import StrataQuery

extension SQLiteStore {
    /// Writes one change set in one `BEGIN IMMEDIATE` transaction, all or
    /// nothing (see ``SQLiteSaveTransaction`` for the order of the steps).
    ///
    /// - A read-only store throws 134030 before touching anything; a closed
    ///   one 134080.
    /// - Values are checked against their attributes
    ///   (``StrataError/Code/invalidValue``: an integer that does
    ///   not fit its width, a value of the wrong kind, NaN, an entity the
    ///   store does not hold) before the transaction starts, except the
    ///   inserts' attribute values in a save of more than 2048 inserts,
    ///   checked as their rows are encoded while earlier rows are written
    ///   (after the version checks); either way such a value writes
    ///   nothing. References to other stores' objects are 133010.
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
    ///
    /// Group commit: saves that arrive while another group is being written
    /// wait and are then written together in one transaction (one commit,
    /// one sync of the WAL), each inside its own savepoint (or, for a
    /// single-row insert, its one statement), so each is still all or
    /// nothing and gets its own answer, and none is answered before the
    /// commit.
    ///
    /// Nonisolated: a save is queued under the save queue's lock, with no
    /// hop to the actor (``close()`` closes that queue before it waits).
    public nonisolated func save(_ changes: StoreChanges) async throws -> StoreSaveResult {
        try await enqueue(changes, feed: nil)
    }

    /// ``save(_:)`` with the inserts supplied through `feed` while the
    /// writer already writes the first ones (``InsertStreamingStore``).
    /// The save is written in a group of its own: its transaction begins
    /// once the first 1024 rows are supplied, and its rows are encoded (and
    /// their values checked) as they come, inside the transaction. A feed
    /// that supplies nothing for its ``StoreInsertFeed/stallLimit`` fails
    /// the save with 134090, so that the writer is never held for good.
    public func save(_ changes: StoreChanges, streaming feed: StoreInsertFeed) async throws -> StoreSaveResult {
        guard changes.inserts.isEmpty else {
            throw StrataError(.invalidValue, "store \(path): a streamed save carries its inserts in the feed, not in the change set")
        }
        guard feed.claim() else {
            throw StrataError(.invalidValue, "store \(path): this insert feed was already given to a save")
        }
        return try await enqueue(changes, feed: feed)
    }

    /// ``save(_:)`` answered through `completion`, called on the writer's
    /// thread once the save's group is committed (or failed), or at once
    /// when the store refuses it (read-only, closed)
    /// (``CompletionSavingStore``). Needs no task and no hop to the actor:
    /// whether the store is closed is decided under the save queue's lock.
    public nonisolated func save(_ changes: StoreChanges, completion: @escaping @Sendable (Result<StoreSaveResult, any Error>) -> Void) {
        enqueue(changes, feed: nil, completion: completion)
    }

    /// Queues a save for the next group commit and waits for its answer.
    private nonisolated func enqueue(_ changes: StoreChanges, feed: StoreInsertFeed?) async throws -> StoreSaveResult {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(changes, feed: feed) { continuation.resume(with: $0) }
        }
    }

    /// Queues a save for the next group commit; `completion` hears of it.
    private nonisolated func enqueue(_ changes: StoreChanges, feed: StoreInsertFeed?, completion: @escaping @Sendable (Result<StoreSaveResult, any Error>) -> Void) {
        if storeDescription.isReadOnly {
            return completion(.failure(StrataError(.storeSave, "store \(path) is read-only: it refuses every save")))
        }
        let database: any DatabaseWriter
        do {
            database = try openDatabase()
        } catch {
            return completion(.failure(error))
        }
        guard !changes.isEmpty || (feed?.count ?? 0) > 0 else { return completion(.success(.committed(StoreCommit()))) }
        switch saveQueue.append(PendingSave(changes: changes, feed: feed, completion: completion)) {
        case .queued:
            break
        case .startDrain:
            database.asyncWriteWithoutTransaction { db in self.drain(db, database: database) }
        case .closed:
            completion(.failure(StrataError(.storeOpen, "store \(path) is closed")))
        }
    }

    /// How long one drain keeps the writer's queue before it lets the
    /// writer's other work (history bookkeeping, another store operation)
    /// through and queues itself again behind it.
    static let drainSlice = Duration.milliseconds(50)

    /// On the writer's queue: writes the waiting saves, group after group,
    /// answering each group once it is committed, until none waits.
    ///
    /// - The next group is taken right after the last is answered, on the
    ///   same thread, without going back to the actor: under a steady load
    ///   the writer goes from one commit to the next.
    /// - After a group whose commit took the write-ahead log past its
    ///   threshold, the log is checkpointed before the next group (once that
    ///   group's saves are answered, not inside their commit): under a
    ///   steady load saves always wait, and a checkpoint put off until none
    ///   does would let the log grow without bound.
    /// - A lock held by another connection past SQLite's busy handler is
    ///   waited for here (``SQLiteBusyRetry/runBlocking(deadline:_:)``):
    ///   the writer cannot write anything else meanwhile.
    nonisolated func drain(_ db: Database, database: any DatabaseWriter) {
        let clock = ContinuousClock()
        let started = clock.now
        let history = recordsHistory ? HistoryRecording(origin: historyOrigin, model: model, ownHistory: ownHistory) : nil
        while let group = saveQueue.nextGroup() {
            var results: [Result<StoreSaveResult, any Error>]
            let groupStarted = clock.now
            do {
                do {
                    results = try SQLiteBusyRetry.runBlocking(deadline: storeDescription.busyTimeout) {
                        try Self.write(group, db: db, environment: saveEnvironment, history: history)
                    }
                } catch is GroupFailure {
                    // A save without a savepoint failed after it wrote: the
                    // group is written again, every save in a savepoint, so
                    // that only that save fails.
                    results = try SQLiteBusyRetry.runBlocking(deadline: storeDescription.busyTimeout) {
                        try Self.write(group, db: db, environment: saveEnvironment, history: history, savepointForEach: true)
                    }
                }
            } catch {
                results = Array(repeating: .failure(error), count: group.count)
            }
            metrics.recordCommit(saves: group.count, duration: groupStarted.duration(to: clock.now))
            // By index: iterating a zip copies every save and result.
            for index in group.indices {
                group[index].completion(results[index].mapError { error in
                    error as? StrataError ?? strataError(error, failure: .storeSave, operation: "save")
                })
            }
            if walMonitor.checkpointIfNeeded(db) { metrics.checkpoints.increment() }
            if started.duration(to: clock.now) > Self.drainSlice {
                database.asyncWriteWithoutTransaction { db in self.drain(db, database: database) }
                return
            }
        }
    }

    /// Writes a group of change sets in one immediate transaction, each in
    /// a savepoint that is rolled back when that change set conflicts or
    /// fails. One code path for every size of group. Checking and encoding
    /// happen before the transaction begins (see ``SQLiteInsertPipeline``
    /// for large inserts).
    ///
    /// A save needs no savepoint of its own when it is alone in the group
    /// (its failure rolls the transaction back) or, unless
    /// `savepointForEach`, when it writes with one statement
    /// (``SQLiteSaveTransaction/writesOneStatement``: SQLite undoes a
    /// failed statement by itself). When such a save fails after its
    /// statement wrote, or the history rows gathered for several saves
    /// cannot be written, the group is rolled back and ``GroupFailure``
    /// thrown: the caller writes the group again with `savepointForEach`,
    /// each save's history written in its own savepoint.
    ///
    /// A lock held by another connection (SQLite's BUSY or LOCKED) is
    /// thrown out of the whole group, after the rollback, so that
    /// ``SQLiteBusyRetry`` writes the group again.
    private static func write(_ group: [PendingSave], db: Database, environment: SQLiteSaveTransaction.Environment, history: HistoryRecording?,
                              savepointForEach: Bool = false) throws -> [Result<StoreSaveResult, any Error>] {
        let (mapping, path) = (environment.mapping, environment.path)
        // Each save's checked and encoded transaction, or why it failed;
        // a transaction is moved out when written, never copied.
        var transactions: [SQLiteSaveTransaction?] = []
        transactions.reserveCapacity(group.count)
        var results: [Result<StoreSaveResult, any Error>] = []
        results.reserveCapacity(group.count)
        for index in group.indices {
            // Moved into the array, not copied: a copy of a transaction
            // retains everything it holds.
            let feed = group[index].feed
            do {
                var transaction = SQLiteSaveTransaction(changes: group[index].changes, environment: environment)
                try transaction.prepare(feed: feed)
                transactions.append(consume transaction)
            } catch {
                transactions.append(nil)
                results.append(.failure(error))
                continue
            }
            // The write lock is taken once the first rows are there.
            if let feed {
                do {
                    _ = try feed.inserts(0..<min(feed.count, SQLiteInsertPipeline.chunkRows))
                } catch {
                    transactions[transactions.count - 1] = nil
                    results.append(.failure(error))
                    continue
                }
            }
            results.append(.success(.committed(StoreCommit())))
        }
        let timestamp = Date()
        // Savepoints keep the saves of a group apart; a save written alone
        // has the transaction to itself, and its failure rolls that back.
        let shared = transactions.lazy.filter { $0 != nil }.count > 1
        guard transactions.contains(where: { $0 != nil }) else { return results }
        // The history tokens the transaction recorded, once it commits.
        var recordedTokens: ClosedRange<Int64>?
        try SQLiteStatementRunner.inImmediateTransaction(db) {
            // One key allocation for the group: a save rolled back to its
            // savepoint leaves a gap in the keys.
            var keys = SQLiteKeyAllocator()
            // History rows are gathered and written for the whole group
            // (see SQLiteHistory.Recorder), outside the saves' savepoints;
            // with a savepoint for each save, each save's as it is written,
            // inside its savepoint, so that a failure fails that save only.
            var recorder = history.map { _ in
                // By index: reduce copies every save.
                var objects = 0
                for index in group.indices { objects += group[index].changes.inserts.count + group[index].changes.updates.count + group[index].changes.deletes.count }
                return SQLiteHistory.Recorder(path: path, saves: group.count, objects: objects)
            }
            // A failure writing the rows of several saves is a GroupFailure.
            func flushHistory(all: Bool) throws {
                do {
                    if all { try recorder?.flush(db) } else { try recorder?.flushIfLarge(db) }
                } catch let error as DatabaseError where SQLiteBusyRetry.isBusy(error) {
                    throw error
                } catch {
                    throw GroupFailure(underlying: error)
                }
            }
            // Prepared once, not parsed again for every save.
            // Run straight on SQLite (SQLiteStatementRunner.step): GRDB's
            // own bookkeeping of savepoints, for transaction observers this
            // connection does not have, costs allocations for every save.
            let savepoint = shared ? try db.cachedStatement(sql: "SAVEPOINT strata_group_save") : nil
            let release = shared ? try db.cachedStatement(sql: "RELEASE SAVEPOINT strata_group_save") : nil
            let rollback = shared ? try db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT strata_group_save") : nil
            var committed = 0
            for index in transactions.indices {
                guard var transaction = transactions[index].take() else { continue }
                // Between saves, so no save's rollback undoes them.
                try flushHistory(all: false)
                if shared, !savepointForEach, transaction.writesOneStatement {
                    // No savepoint: SQLite undoes a failed statement by
                    // itself; a failure after the one statement wrote
                    // (recording its history) is a GroupFailure.
                    do {
                        let outcome = try execute(&transaction, feed: group[index].feed, db: db, mapping: mapping, history: history, recorder: &recorder, timestamp: timestamp, keys: &keys, failsGroup: true)
                        if case .committed = outcome { committed += 1 }
                        results[index] = .success(outcome)
                    } catch let error as GroupFailure {
                        throw error
                    } catch let error as DatabaseError where SQLiteBusyRetry.isBusy(error) {
                        throw error
                    } catch {
                        // The statement failed alone, unless SQLite ended
                        // the transaction (an I/O error, a full disk).
                        guard sqlite3_get_autocommit(db.sqliteConnection) == 0 else { throw error }
                        results[index] = .failure(error)
                    }
                    continue
                }
                try SQLiteStatementRunner.step(savepoint)
                let recorded = recorder?.mark
                do {
                    let outcome = try execute(&transaction, feed: group[index].feed, db: db, mapping: mapping, history: history, recorder: &recorder, timestamp: timestamp, keys: &keys,
                                              flushesHistory: savepointForEach || !shared)
                    if case .committed = outcome {
                        committed += 1
                    } else {
                        try SQLiteStatementRunner.step(rollback)
                    }
                    try SQLiteStatementRunner.step(release)
                    results[index] = .success(outcome)
                } catch let error as DatabaseError where SQLiteBusyRetry.isBusy(error) {
                    throw error
                } catch {
                    try SQLiteStatementRunner.step(rollback)
                    try SQLiteStatementRunner.step(release)
                    // Rolled back after it was recorded (its release failed):
                    // its history goes too.
                    if let recorded { recorder?.rewind(to: recorded) }
                    results[index] = .failure(error)
                }
            }
            // Nothing to keep: no commit (and no sync) at all.
            guard committed > 0 else { return .rollback }
            try flushHistory(all: true)
            try keys.record(db)
            recordedTokens = recorder?.committedTokens
            return .commit
        }
        if let recordedTokens { history?.ownHistory.noteCommitted(recordedTokens) }
        return results
    }

    /// Runs one change set inside the open transaction and, when it
    /// commits and the store records history, records its transaction
    /// (the preserved values of deleted rows are read before the deletes;
    /// a streamed save's inserts come from its `feed`).
    ///
    /// With `failsGroup` (a save without a savepoint of its own), an error
    /// recording the history of a change set already written is thrown as
    /// a ``GroupFailure``: the group's transaction must be rolled back.
    /// With `flushesHistory` (a save alone in its transaction or in a
    /// savepoint of its own), its history rows are written here.
    private static func execute(_ transaction: inout SQLiteSaveTransaction, feed: StoreInsertFeed?, db: Database, mapping: SQLiteStoreMapping, history: HistoryRecording?, recorder: inout SQLiteHistory.Recorder?, timestamp: Date, keys: inout SQLiteKeyAllocator,
                                failsGroup: Bool = false, flushesHistory: Bool = false) throws -> StoreSaveResult {
        guard let history, recorder != nil else { return try transaction.execute(db, keys: &keys) }
        let deletes = transaction.changes.deletes
        let tombstones = deletes.isEmpty ? [:] : try SQLiteHistory.tombstones(db, deletes: deletes, mapping: mapping, model: history.model)
        let outcome = try transaction.execute(db, keys: &keys)
        if case .committed(let commit) = outcome {
            do {
                if let feed {
                    // Streamed inserts are all supplied once their rows are written.
                    var changes = transaction.changes
                    changes.inserts = try feed.allInserts()
                    try recorder?.record(db, changes: changes, commit: commit, tombstones: tombstones, origin: history.origin, processID: HistoryRecording.processID, timestamp: timestamp,
                                         flushing: flushesHistory)
                } else {
                    try recorder?.record(db, changes: transaction.changes, commit: commit, tombstones: tombstones, origin: history.origin, processID: HistoryRecording.processID, timestamp: timestamp,
                                         flushing: flushesHistory)
                }
                if flushesHistory { try recorder?.flush(db) }
            } catch where failsGroup {
                throw GroupFailure(underlying: error)
            }
        }
        return outcome
    }
}

/// An error after a save without a savepoint wrote: it cannot be undone
/// alone, so the group is rolled back and written again with a savepoint
/// for each save (where `underlying` fails that save only).
struct GroupFailure: Error {
    let underlying: any Error
}

/// What a save needs to record persistent history, made once per drain.
/// A class: it is handed to every save of a group, and a struct's copy
/// would retain each reference it holds (the model's among them) for each.
final class HistoryRecording: Sendable {
    /// This process's ID.
    static let processID = ProcessInfo.processInfo.processIdentifier
    /// The store instance writing.
    let origin: String
    /// The model (which attributes are preserved after deletion).
    let model: ObjectModel
    /// Where committed groups' tokens are noted for the change watcher.
    let ownHistory: SQLiteOwnHistory

    init(origin: String, model: ObjectModel, ownHistory: SQLiteOwnHistory) {
        self.origin = origin
        self.model = model
        self.ownHistory = ownHistory
    }
}

/// A save waiting for its group commit.
struct PendingSave: Sendable {
    let changes: StoreChanges
    /// The inserts, when they are streamed (then `changes` has none).
    let feed: StoreInsertFeed?
    /// Told the save's result, on the writer's thread.
    let completion: @Sendable (Result<StoreSaveResult, any Error>) -> Void
}

