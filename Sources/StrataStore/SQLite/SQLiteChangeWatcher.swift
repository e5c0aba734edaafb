import Foundation
import GRDB
import StrataModel

/// Notices other connections' commits to a SQLite store and reads their
/// history: the store side of cross-process change notification.
///
/// It keeps one read-only connection of its own and polls
/// `PRAGMA data_version` on it, which changes exactly when another
/// connection (of this process or another) has committed since the last
/// poll; polling an unchanged store costs one pragma, run synchronously on
/// the polling task (microseconds; an idle server with two stores spends
/// well under 1% of a core on it). When it changes, the
/// transactions after the last one seen are read (those of ``origin``, this
/// store instance, skipped in the query) and yielded in token order.
struct SQLiteChangeWatcher: Sendable {
    let path: String
    let storeIdentifier: String
    let origin: String
    let model: ObjectModel
    let busyTimeout: Duration

    /// At most this many transactions are read per query.
    static let pageSize = 512

    /// The other instances' transactions from now on, one update per poll
    /// that saw a commit. Cancelling the
    /// consumer (or dropping the stream) closes the connection; an error
    /// (the file gone, history purged past the last token seen) ends the
    /// stream with it.
    func updates(pollInterval: Duration) -> AsyncThrowingStream<HistoryUpdate, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: HistoryUpdate.self)
        let task = Task {
            do {
                try await watch(pollInterval: pollInterval, continuation: continuation)
                continuation.finish()
            } catch is CancellationError {
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func watch(pollInterval: Duration, continuation: AsyncThrowingStream<HistoryUpdate, any Error>.Continuation) async throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "Strata.SQLiteChangeWatcher"
        let seconds = Double(busyTimeout.components.seconds) + Double(busyTimeout.components.attoseconds) / 1e18
        configuration.busyMode = .timeout(seconds)
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? connection.close() }
        let (storeIdentifier, origin, model, path) = (self.storeIdentifier, self.origin, self.model, self.path)

        var (version, last) = try await SQLiteBusyRetry.run(deadline: busyTimeout) {
            try await connection.read { db in
                (try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0, try SQLiteHistory.currentToken(db))
            }
        }
        while true {
            try await Task.sleep(for: pollInterval)
            // The common case, nothing committed: one pragma, run right
            // here (no transaction, no hop to the connection's queue).
            let current = try connection.inDatabase { db in
                try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
            }
            if current == version { continue }
            let (seenVersion, seenToken) = (version, last)
            let poll = try await SQLiteBusyRetry.run(deadline: busyTimeout) {
                try await connection.read { db -> (version: Int64, through: Int64, found: [HistoryTransaction]) in
                    let now = try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
                    guard now != seenVersion else { return (now, seenToken, []) }
                    let through = try SQLiteHistory.currentToken(db)
                    let found = try Self.read(db, after: seenToken, through: through, excluding: origin, storeIdentifier: storeIdentifier, model: model, path: path)
                    return (now, through, found)
                }
            }
            // Up to the newest token, this instance's own transactions
            // included, so that none is looked at again.
            guard poll.version != version else { continue }
            version = poll.version
            last = max(last, poll.through)
            continuation.yield(HistoryUpdate(transactions: poll.found, token: HistoryToken(storeIdentifier: storeIdentifier, value: last)))
        }
    }

    /// Every other instance's transaction after `token`, up to `through`.
    static func read(_ db: Database, after token: Int64, through: Int64, excluding origin: String, storeIdentifier: String, model: ObjectModel, path: String) throws -> [HistoryTransaction] {
        var result: [HistoryTransaction] = []
        var after = token
        while after < through {
            let page = try SQLiteHistory.transactions(db, after: after, through: through, limit: pageSize, excludingOrigin: origin, storeIdentifier: storeIdentifier, model: model, path: path)
            result += page
            guard page.count == pageSize, let newest = page.last?.token.value else { break }
            after = newest
        }
        return result
    }
}
