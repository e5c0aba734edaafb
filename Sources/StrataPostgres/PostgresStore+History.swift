import Foundation
import Logging
import PostgresNIO
import StrataModel
import StrataStore

extension PostgresStore: HistoryTrackingStore {
    /// The token of the last committed transaction.
    public nonisolated func currentHistoryToken() async throws -> HistoryToken {
        let value = try await withRunner(operation: "history token read") { runner in try await PostgresHistory.state(runner).last }
        return HistoryToken(storeIdentifier: identifier, value: value)
    }

    /// The transactions after `token`, oldest first, at most `limit`. A
    /// token of another store is ``StrataError/Code/invalidValue``; an
    /// expired one 134301.
    public nonisolated func history(after token: HistoryToken?, limit: Int) async throws -> [HistoryTransaction] {
        let after = try checkedValue(of: token)
        let (identifier, model, place, logger) = (self.identifier, self.model, self.place, self.logger)
        let client = try client()
        do {
            // One snapshot: a purge between the horizon check and the rows
            // cannot make the read skip transactions without 134301.
            return try await Self.readTransaction(client, logger: logger) { connection in
                try await PostgresHistory.transactions(PostgresStatementRunner(connection: connection, logger: logger), after: after, limit: limit,
                                                       storeIdentifier: identifier, model: model, place: place)
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: "history read")
        }
    }

    /// Records consumer `name`'s token (never moving it backwards).
    public nonisolated func recordConsumer(_ name: String, token: HistoryToken) async throws {
        let value = try checkedValue(of: token) ?? 0
        try refuseIfReadOnly("recording history consumer \(name)")
        let place = self.place
        try await withRunner(operation: "recording history consumer \(name)") { runner in
            try await PostgresHistory.recordConsumer(runner, name: name, token: value, at: Date(), place: place)
        }
    }

    /// Every consumer and its token.
    public nonisolated func consumers() async throws -> [HistoryConsumer] {
        let identifier = self.identifier
        return try await withRunner(operation: "history consumers read") { runner in
            try await PostgresHistory.consumers(runner, storeIdentifier: identifier)
        }
    }

    /// Purges what every live consumer (of every server) has merged, in
    /// one transaction holding the history state row.
    public nonisolated func purgeHistory(maximumAge: Duration) async throws -> HistoryPurge {
        try refuseIfReadOnly("history purge")
        let seconds = Double(maximumAge.components.seconds) + Double(maximumAge.components.attoseconds) / 1e18
        let client = try client()
        let logger = self.logger
        let result: (removed: Int, through: Int64)
        do {
            result = try await client.withTransaction(logger: logger) { connection in
                try await PostgresHistory.purge(PostgresStatementRunner(connection: connection, logger: logger), maximumAge: seconds, now: Date())
            }
        } catch {
            throw strataError(error, failure: .storeSave, operation: "history purge")
        }
        return HistoryPurge(transactions: result.removed, purgedThrough: result.through > 0 ? HistoryToken(storeIdentifier: identifier, value: result.through) : nil)
    }

    /// Other servers' (and other instances') transactions, followed by a
    /// ``PostgresChangeWatcher`` on its own connection: woken by the
    /// store's notifications, and at least every `pollInterval` or second,
    /// whichever is longer.
    public nonisolated func externalChanges(after token: HistoryToken?, pollInterval: Duration) -> AsyncThrowingStream<HistoryUpdate, any Error> {
        if let token, token.storeIdentifier != identifier || token.value < 0 {
            let error = StrataError(.invalidValue, "\(place): history token \(token) does not belong to store \(identifier)")
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        if (try? client()) == nil {
            let error = StrataError(.storeOpen, "\(place) is closed")
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        var watcher = PostgresChangeWatcher(configuration: watcherConfiguration, storeIdentifier: identifier, origin: historyOrigin, model: model, place: place, logger: logger)
        watcher.fallbackInterval = max(pollInterval, .seconds(1))
        return watcher.updates(after: token?.value)
    }

    // MARK: - Helpers

    private nonisolated func checkedValue(of token: HistoryToken?) throws(StrataError) -> Int64? {
        guard let token else { return nil }
        guard token.storeIdentifier == identifier else {
            throw StrataError(.invalidValue, "\(place): history token \(token) belongs to store \(token.storeIdentifier), not \(identifier)")
        }
        guard token.value >= 0 else {
            throw StrataError(.invalidValue, "\(place): history token \(token.value) is negative")
        }
        return token.value
    }

    private nonisolated func refuseIfReadOnly(_ operation: String) throws(StrataError) {
        if storeDescription.isReadOnly {
            throw StrataError(.storeSave, "\(place) is read-only: \(operation) is refused")
        }
    }

    /// Runs `body` on a pooled connection, its errors as ``StrataError``s.
    @discardableResult
    private nonisolated func withRunner<T: Sendable>(operation: String, _ body: (PostgresStatementRunner) async throws -> T) async throws -> T {
        let client = try client()
        let logger = self.logger
        do {
            return try await client.withConnection { connection in
                try await body(PostgresStatementRunner(connection: connection, logger: logger))
            }
        } catch {
            throw strataError(error, failure: .storeOpen, operation: operation)
        }
    }
}
