import Logging
import PostgresNIO
import StrataModel
import StrataQuery
import StrataStore

/// A save waiting for its group commit.
struct PendingSave {
    let transaction: PostgresSaveTransaction
    let continuation: CheckedContinuation<StoreSaveResult, any Error>
    var attempts: Int
}

extension PostgresStore {
    /// The most saves written in one database transaction (each is a
    /// subtransaction: PostgreSQL keeps 64 per transaction in shared
    /// memory, and more slow down every session's snapshots).
    static let maximumGroup = 48

    /// Writes one change set, all or nothing (see ``PostgresSaveTransaction``).
    ///
    /// Saves made while another group is being written are written
    /// together in the next one: one database transaction, the group's keys
    /// reserved first, each save undone alone when it fails or conflicts
    /// (see ``writeGroup``), the history transactions of the saves that
    /// commit, one notification and one commit (one WAL flush) for the
    /// group. A save waits for another server's row locks at most the
    /// description's busy timeout (`lock_timeout`), then fails with 134090.
    /// PostgreSQL serialises the commits of notifying transactions, and
    /// tokens are handed out in commit order: grouping is what lets saves
    /// share a commit. A save that meets a deadlock (40P01) or a
    /// serialization failure (40001) with another server's is written
    /// again, up to three times in all. A read-only store refuses saves
    /// before anything else (134030).
    public func save(_ changes: StoreChanges) async throws -> StoreSaveResult {
        guard !storeDescription.isReadOnly else {
            throw StrataError(.storeSave, "\(place) is read-only")
        }
        _ = try client()
        if changes.isEmpty { return .committed(StoreCommit()) }
        let prepared = try PostgresSaveTransaction(changes: changes, mapping: mapping, decoder: decoder, storeIdentifier: identifier, place: place)
        return try await withCheckedThrowingContinuation { continuation in
            pendingSaves.append(PendingSave(transaction: prepared, continuation: continuation, attempts: 0))
            if !isCommitting {
                isCommitting = true
                Task { await self.drainSaves() }
            }
        }
    }

    /// Writes the waiting saves in groups until none waits.
    private func drainSaves() async {
        while !pendingSaves.isEmpty {
            let group = Array(pendingSaves.prefix(Self.maximumGroup))
            pendingSaves.removeFirst(group.count)
            guard let client = try? client() else {
                for save in group { save.continuation.resume(throwing: StrataError(.storeOpen, "\(place) is closed")) }
                continue
            }
            let outcomes = await Self.writeGroup(group.map(\.transaction), client: client, mapping: mapping, origin: historyOrigin, storeIdentifier: identifier,
                                                 place: place, logger: logger)
            var again: [PendingSave] = []
            for (save, outcome) in zip(group, outcomes) {
                switch outcome {
                case .done(let result):
                    save.continuation.resume(with: result)
                case .transient(let error):
                    if save.attempts < 2 {
                        again.append(PendingSave(transaction: save.transaction, continuation: save.continuation, attempts: save.attempts + 1))
                    } else {
                        save.continuation.resume(throwing: error)
                    }
                }
            }
            // Every save is answered, whatever the group's outcome list holds.
            for save in group.dropFirst(outcomes.count) {
                save.continuation.resume(throwing: StrataError(.storeSave, "\(place): the save's group ended without its outcome"))
            }
            pendingSaves.insert(contentsOf: again, at: 0)
        }
        isCommitting = false
    }

    /// What became of one save of a group.
    enum GroupOutcome {
        /// Answered: committed, a conflict, or an error.
        case done(Result<StoreSaveResult, any Error>)
        /// A deadlock or serialization failure: to be written again.
        case transient(StrataError)
    }

    /// Writes `transactions` in one database transaction (see ``save(_:)``):
    /// first without savepoints (most groups: every save commits or meets
    /// a version conflict before writing anything); when a save fails or
    /// answers a uniqueness conflict after writing, the group is rolled
    /// back and written again with a savepoint around each save.
    private static func writeGroup(_ transactions: [PostgresSaveTransaction], client: PostgresClient, mapping: PostgresStoreMapping, origin: String,
                                   storeIdentifier: String, place: String, logger: Logger) async -> [GroupOutcome] {
        func failure(_ error: any Error) -> StrataError {
            if let error = error as? PSQLError, error.serverInfo?[.sqlState] == "55P03" {
                return StrataError(.storeTimeout, "\(place): a save waited longer than the busy timeout for rows another save holds")
            }
            return PostgresErrors.strataError(error, failure: .storeSave, doing: "\(place): save")
        }
        do {
            return try await client.withConnection { connection in
                let runner = PostgresStatementRunner(connection: connection, logger: logger)
                if let outcomes = try await write(transactions, savepoints: false, runner: runner, mapping: mapping, origin: origin,
                                                  storeIdentifier: storeIdentifier, place: place, failure: failure) {
                    return outcomes
                }
                return try await write(transactions, savepoints: true, runner: runner, mapping: mapping, origin: origin,
                                       storeIdentifier: storeIdentifier, place: place, failure: failure) ?? []
            }
        } catch {
            // The group's transaction failed (its connection, its commit):
            // every save of it fails, or is written again.
            return transactions.map { _ in isTransient(error) ? .transient(failure(error)) : .done(.failure(failure(error))) }
        }
    }

    /// One database transaction of the group; nil (rolled back) when,
    /// without `savepoints`, a save could not be kept apart from the others.
    private static func write(_ transactions: [PostgresSaveTransaction], savepoints: Bool, runner: PostgresStatementRunner, mapping: PostgresStoreMapping,
                              origin: String, storeIdentifier: String, place: String, failure: (any Error) -> StrataError) async throws -> [GroupOutcome]? {
        try await runner.run(PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL READ COMMITTED"))
        do {
            // Every key of the group first, before any save locks a row.
            var counts: [String: Int64] = [:]
            for transaction in transactions { counts.merge(transaction.keyCounts, uniquingKeysWith: +) }
            var next = try await PostgresSaveTransaction.reserveKeys(counts, mapping: mapping, runner: runner, place: place)
            var outcomes: [GroupOutcome] = []
            var committed: [PostgresHistory.Entry] = []
            for prepared in transactions {
                var transaction = prepared
                transaction.assignKeys(&next)
                if savepoints { try await runner.run(PostgresQuery(unsafeSQL: "SAVEPOINT strata_save")) }
                do {
                    let result = try await transaction.execute(runner.connection, logger: runner.logger)
                    switch result {
                    case .committed(let commit):
                        committed.append(PostgresHistory.Entry(changes: transaction.changes, commit: commit, tombstones: transaction.tombstones))
                        if savepoints { try await runner.run(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT strata_save")) }
                    case .conflicts:
                        // Answered by the version check, before any write.
                        if savepoints { try await runner.run(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT strata_save")) }
                    case .constraintConflicts:
                        guard savepoints else {
                            try await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK"))
                            return nil
                        }
                        try await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK TO SAVEPOINT strata_save"))
                        try await runner.run(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT strata_save"))
                    }
                    outcomes.append(.done(.success(result)))
                } catch {
                    guard savepoints else {
                        try await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK"))
                        return nil
                    }
                    // This save alone is undone; the group goes on.
                    try await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK TO SAVEPOINT strata_save"))
                    try await runner.run(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT strata_save"))
                    outcomes.append(isTransient(error) ? .transient(failure(error)) : .done(.failure(failure(error))))
                }
            }
            guard !committed.isEmpty else {
                try await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK"))
                return outcomes
            }
            let token = try await PostgresHistory.record(runner, committed, origin: origin)
            try await PostgresHistory.notify(runner, storeIdentifier: storeIdentifier, token: token)
            try await runner.run(PostgresQuery(unsafeSQL: "COMMIT"))
            return outcomes
        } catch {
            _ = try? await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK"))
            throw error
        }
    }

    /// Whether `error` is a conflict with a concurrent transaction that
    /// running the save again resolves.
    static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }
}
