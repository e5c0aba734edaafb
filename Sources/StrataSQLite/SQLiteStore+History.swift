import Foundation
import GRDB
import StrataModel
import StrataStore

extension SQLiteStore: HistoryTrackingStore {
    /// The token of the last committed transaction (value 0 when the store
    /// has no history).
    public func currentHistoryToken() async throws -> HistoryToken {
        let database = try openDatabase()
        do {
            let value = try await read(database) { db in try SQLiteHistory.currentToken(db) }
            return HistoryToken(storeIdentifier: identifier, value: value)
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "history token read")
        }
    }

    /// The transactions after `token`, oldest first, at most `limit` (see
    /// ``HistoryTrackingStore/history(after:limit:)``). A token of another
    /// store is ``StrataError/Code/invalidValue``; an expired one 134301.
    public func history(after token: HistoryToken?, limit: Int) async throws -> [HistoryTransaction] {
        let database = try openDatabase()
        let after = try checkedValue(of: token)
        let (identifier, model, path) = (self.identifier, self.model, self.path)
        do {
            return try await read(database) { db in
                try SQLiteHistory.transactions(db, after: after ?? SQLiteHistory.purgedThrough(db), limit: limit, storeIdentifier: identifier, model: model, path: path)
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "history read")
        }
    }

    /// Records consumer `name`'s token (never moving it backwards).
    public func recordConsumer(_ name: String, token: HistoryToken) async throws {
        let value = try checkedValue(of: token) ?? 0
        let path = self.path
        try await writeHistory(operation: "recording history consumer \(name)") { db in
            try SQLiteHistory.recordConsumer(db, name: name, token: value, at: Date(), path: path)
        }
    }

    /// Every consumer and its token.
    public func consumers() async throws -> [HistoryConsumer] {
        let database = try openDatabase()
        let identifier = self.identifier
        do {
            return try await read(database) { db in try SQLiteHistory.consumers(db, storeIdentifier: identifier) }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "history consumers read")
        }
    }

    /// Purges what every live consumer has merged (see
    /// ``HistoryTrackingStore/purgeHistory(maximumAge:)``).
    public func purgeHistory(maximumAge: Duration) async throws -> HistoryPurge {
        let seconds = Double(maximumAge.components.seconds) + Double(maximumAge.components.attoseconds) / 1e18
        let result = try await writeHistory(operation: "history purge") { db in
            try SQLiteHistory.purge(db, maximumAge: seconds, now: Date())
        }
        return HistoryPurge(transactions: result.removed, purgedThrough: result.through > 0 ? HistoryToken(storeIdentifier: identifier, value: result.through) : nil)
    }

    /// Other instances' transactions, read by a ``SQLiteChangeWatcher`` on
    /// its own connection every `pollInterval` while they commit; while
    /// none does, the interval doubles after each look, up to 100 ms (or
    /// `pollInterval`, if longer), and it returns to `pollInterval` at the
    /// first of their transactions found. A token of another store
    /// ends the stream at once with ``StrataError/Code/invalidValue``.
    public nonisolated func externalChanges(after token: HistoryToken?, pollInterval: Duration) -> AsyncThrowingStream<HistoryUpdate, any Error> {
        if let token, token.storeIdentifier != identifier || token.value < 0 {
            let error = StrataError(.invalidValue, "store \(path): history token \(token) does not belong to store \(identifier)")
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        let watcher = SQLiteChangeWatcher(path: path, storeIdentifier: identifier, origin: historyOrigin, model: model, busyTimeout: storeDescription.busyTimeout,
                                          ownHistory: ownHistory)
        return watcher.updates(after: token?.value, pollInterval: pollInterval)
    }

    // MARK: - Helpers

    private func checkedValue(of token: HistoryToken?) throws(StrataError) -> Int64? {
        guard let token else { return nil }
        guard token.storeIdentifier == identifier else {
            throw StrataError(.invalidValue, "store \(path): history token \(token) belongs to store \(token.storeIdentifier), not \(identifier)")
        }
        guard token.value >= 0 else {
            throw StrataError(.invalidValue, "store \(path): history token \(token.value) is negative")
        }
        return token.value
    }

    /// Runs a bookkeeping write on the history tables in an immediate
    /// transaction, retried while busy. A read-only store, or one without
    /// history, refuses (134030).
    private func writeHistory<T: Sendable>(operation: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard !storeDescription.isReadOnly else {
            throw StrataError(.storeSave, "store \(path) is read-only: \(operation) is refused")
        }
        guard recordsHistory else {
            throw StrataError(.storeSave, "store \(path) does not record history (opened with tracksHistory off on a file without history): \(operation) is refused")
        }
        let database = try openDatabase()
        let monitor = walMonitor
        do {
            return try await SQLiteBusyRetry.run(deadline: storeDescription.busyTimeout) {
                try await database.writeWithoutTransaction { db in
                    var result: T?
                    try db.inTransaction(.immediate) {
                        result = try body(db)
                        return .commit
                    }
                    monitor.checkpointIfNeeded(db)
                    guard let result else {
                        throw StrataError(.storeSave, "store \(db.description): \(operation) ended without a result")
                    }
                    return result
                }
            }
        } catch {
            throw strataError(error, failure: .storeSave, operation: operation)
        }
    }
}
