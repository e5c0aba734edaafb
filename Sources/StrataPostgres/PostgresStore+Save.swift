import Logging
import PostgresNIO
import StrataModel
import StrataQuery
import StrataStore

extension PostgresStore {
    /// Writes one change set in one transaction, all or nothing (see
    /// ``PostgresSaveTransaction``). A read-only store refuses it before
    /// anything else (134030). A deadlock (40P01) or serialization failure
    /// (40001) with another server's save runs the save again, up to three
    /// times in all.
    public func save(_ changes: StoreChanges) async throws -> StoreSaveResult {
        guard !storeDescription.isReadOnly else {
            throw StrataError(.storeSave, "\(place) is read-only")
        }
        let client = try client()
        if changes.isEmpty { return .committed(StoreCommit()) }
        let prepared = try PostgresSaveTransaction(changes: changes, mapping: mapping, decoder: decoder, storeIdentifier: identifier, place: place)
        let logger = self.logger
        var attempt = 0
        while true {
            attempt += 1
            do {
                let (origin, identifier) = (historyOrigin, self.identifier)
                return try await client.withConnection { connection in
                    try await Self.write(prepared, on: connection, origin: origin, storeIdentifier: identifier, logger: logger)
                }
            } catch let error where attempt < 3 && Self.isTransient(error) {
                continue
            } catch {
                throw strataError(error, failure: .storeSave, operation: "save")
            }
        }
    }

    /// One attempt: BEGIN, the transaction's statements and, when it
    /// commits, its history and notification, then COMMIT; ROLLBACK
    /// otherwise.
    private static func write(_ prepared: PostgresSaveTransaction, on connection: PostgresConnection, origin: String, storeIdentifier: String, logger: Logger) async throws -> StoreSaveResult {
        var transaction = prepared
        try await connection.query("BEGIN ISOLATION LEVEL READ COMMITTED", logger: logger)
        let result: StoreSaveResult
        do {
            result = try await transaction.execute(connection, logger: logger)
            if case .committed(let commit) = result {
                let runner = PostgresStatementRunner(connection: connection, logger: logger)
                try await PostgresHistory.record(runner, changes: transaction.changes, commit: commit, tombstones: transaction.tombstones,
                                                 origin: origin, storeIdentifier: storeIdentifier)
            }
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
        if case .committed = result {
            try await connection.query("COMMIT", logger: logger)
        } else {
            try await connection.query("ROLLBACK", logger: logger)
        }
        return result
    }

    /// Whether `error` is a conflict with a concurrent transaction that
    /// running the save again resolves.
    static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }
}
