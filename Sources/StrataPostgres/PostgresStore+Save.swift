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
    /// The most saves written in one database transaction.
    static let maximumGroup = 128

    /// Writes one change set, all or nothing (see ``PostgresSaveTransaction``).
    ///
    /// Saves made while another group is being written are written
    /// together in the next one: one database transaction, each save
    /// inside a savepoint of its own (a conflict or error rolls back that
    /// save alone), one history transaction per committed save, one
    /// notification and one commit (one WAL flush) for the group.
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
            let outcomes = await Self.writeGroup(group.map(\.transaction), client: client, origin: historyOrigin, storeIdentifier: identifier, place: place, logger: logger)
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

    /// Writes `transactions` in one database transaction (see ``save(_:)``).
    private static func writeGroup(_ transactions: [PostgresSaveTransaction], client: PostgresClient, origin: String, storeIdentifier: String,
                                   place: String, logger: Logger) async -> [GroupOutcome] {
        func failure(_ error: any Error) -> StrataError {
            PostgresErrors.strataError(error, failure: .storeSave, doing: "\(place): save")
        }
        do {
            return try await client.withConnection { connection in
                let runner = PostgresStatementRunner(connection: connection, logger: logger)
                try await runner.run(PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL READ COMMITTED"))
                do {
                    var outcomes: [GroupOutcome] = []
                    var committed: [(changes: StoreChanges, commit: StoreCommit, tombstones: [Int: [(String, AttributeType, PropertyValue)]])] = []
                    for prepared in transactions {
                        var transaction = prepared
                        try await runner.run(PostgresQuery(unsafeSQL: "SAVEPOINT strata_save"))
                        do {
                            let result = try await transaction.execute(connection, logger: logger)
                            if case .committed(let commit) = result {
                                try await runner.run(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT strata_save"))
                                committed.append((transaction.changes, commit, transaction.tombstones))
                            } else {
                                try await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK TO SAVEPOINT strata_save"))
                            }
                            outcomes.append(.done(.success(result)))
                        } catch {
                            // This save alone is undone; the group goes on.
                            try await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK TO SAVEPOINT strata_save"))
                            outcomes.append(isTransient(error) ? .transient(failure(error)) : .done(.failure(failure(error))))
                        }
                    }
                    guard !committed.isEmpty else {
                        try await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK"))
                        return outcomes
                    }
                    var token: Int64 = 0
                    for save in committed {
                        token = try await PostgresHistory.record(runner, changes: save.changes, commit: save.commit, tombstones: save.tombstones, origin: origin)
                    }
                    try await PostgresHistory.notify(runner, storeIdentifier: storeIdentifier, token: token)
                    try await runner.run(PostgresQuery(unsafeSQL: "COMMIT"))
                    return outcomes
                } catch {
                    _ = try? await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK"))
                    throw error
                }
            }
        } catch {
            // The group's transaction failed (its connection, its commit):
            // every save of it fails, or is written again.
            return transactions.map { _ in isTransient(error) ? .transient(failure(error)) : .done(.failure(failure(error))) }
        }
    }

    /// Whether `error` is a conflict with a concurrent transaction that
    /// running the save again resolves.
    static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }
}
