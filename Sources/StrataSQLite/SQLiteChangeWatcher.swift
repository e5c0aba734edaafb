import Foundation
import GRDB
import StrataModel
import StrataStore

/// Notices other connections' commits to a SQLite store and reads their
/// history: the store side of cross-process change notification.
///
/// It keeps one read-only connection of its own and polls
/// `PRAGMA data_version` on it, which changes exactly when another
/// connection (of this process or another) has committed since the last
/// poll; polling an unchanged store costs one pragma, run synchronously on
/// the polling task. When it changes, the
/// transactions after the last one seen are read (those of ``origin``, this
/// store instance, skipped in the query) and yielded in token order; when
/// they are all this instance's (``ownHistory``: a busy server's commits
/// are almost always its own), none is read, and the update only moves
/// the token on.
///
/// The poll interval backs off while no other instance commits
/// (``nextInterval(after:base:foundOthers:)``): each poll that finds none
/// of their transactions doubles it, up to ``longestIdleInterval`` (or the
/// base interval, if longer), and the first poll that finds one brings it
/// back to the base. A server alone on its files, the common case, then
/// wakes a few times a second rather than a hundred times per store:
/// each wake-up is a timer and a thread woken on a host whose cores the
/// server's event loops and writer are using (on two cores, polling two
/// stores every 10 ms cost gets 6–30% of their throughput in alternating
/// runs, and an idle server 2% of a core).
/// Another instance's first commit after a quiet spell is noticed within
/// the longest interval; those that follow it, within the base.
struct SQLiteChangeWatcher: Sendable {
    let path: String
    let storeIdentifier: String
    let origin: String
    let model: ObjectModel
    let busyTimeout: Duration
    /// The tokens ``origin`` wrote in a row (its store's), which are not
    /// read back: a commit seen to be only those is passed over without a
    /// query (nil: every commit is read).
    var ownHistory: SQLiteOwnHistory?

    /// At most this many transactions are read per read transaction (and
    /// yielded per update).
    var pageSize = 512

    /// The longest the poll interval grows to while no other instance
    /// commits (a base interval longer than this is kept as it is).
    static let longestIdleInterval = Duration.milliseconds(100)

    /// The interval before the next poll: `base` once a poll found another
    /// instance's transactions (`foundOthers`), otherwise `current` doubled,
    /// up to ``longestIdleInterval`` or `base`, whichever is longer.
    static func nextInterval(after current: Duration, base: Duration, foundOthers: Bool) -> Duration {
        if foundOthers { return base }
        let longest = max(base, longestIdleInterval)
        return current >= longest / 2 ? longest : max(current * 2, base)
    }

    /// The other instances' transactions after `token` (from the store's
    /// newest transaction when nil), one update per page read after a poll
    /// saw a commit. Cancelling the consumer (or dropping the stream)
    /// closes the connection; an error (the file gone, history purged past
    /// `token` or the last token seen: 134301) ends the stream with it.
    func updates(after token: Int64?, pollInterval: Duration) -> AsyncThrowingStream<HistoryUpdate, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: HistoryUpdate.self)
        let task = Task {
            do {
                try await watch(after: token, pollInterval: pollInterval, continuation: continuation)
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

    private func watch(after token: Int64?, pollInterval: Duration, continuation: AsyncThrowingStream<HistoryUpdate, any Error>.Continuation) async throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "Strata.SQLiteChangeWatcher"
        let seconds = Double(busyTimeout.components.seconds) + Double(busyTimeout.components.attoseconds) / 1e18
        configuration.busyMode = .timeout(seconds)
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? connection.close() }
        let (storeIdentifier, origin, model, path, pageSize, ownHistory) = (self.storeIdentifier, self.origin, self.model, self.path, max(1, self.pageSize), self.ownHistory)

        let (initialVersion, current) = try await SQLiteBusyRetry.run(deadline: busyTimeout) {
            try await connection.read { db in
                (try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0, try SQLiteHistory.currentToken(db))
            }
        }
        if let token, token > current {
            throw StrataError(.invalidValue, "store \(path): history token \(token) is newer than the store's newest transaction (token \(current)): history was reset, or the token is another file's")
        }
        var version = initialVersion
        var last = token ?? current
        // Resuming: what was committed after `token` is read at once.
        var pending = last < current
        var interval = pollInterval
        while true {
            if !pending {
                try await Task.sleep(for: interval)
                // The common case, nothing committed: one pragma, run right
                // here (no transaction, no hop to the connection's queue),
                // retried while another connection holds a lock.
                let now = try await SQLiteBusyRetry.run(deadline: busyTimeout) {
                    try connection.inDatabase { db in
                        try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
                    }
                }
                if now == version {
                    interval = Self.nextInterval(after: interval, base: pollInterval, foundOthers: false)
                    continue
                }
                version = now
                // A store busy with its own saves (the common case): when
                // every commit since is this instance's, the newest token
                // (read right here, without a transaction) is all there is
                // to learn. Unless history was purged past the last token
                // seen: the read below reports that (134301).
                if let ownHistory, ownHistory.mayCover(after: last) {
                    let (through, purged) = try await SQLiteBusyRetry.run(deadline: busyTimeout) {
                        try connection.inDatabase { db in (try SQLiteHistory.currentToken(db), try SQLiteHistory.purgedThrough(db)) }
                    }
                    if ownHistory.passesOver(after: last, through: through, purgedThrough: purged) {
                        last = through
                        interval = Self.nextInterval(after: interval, base: pollInterval, foundOthers: false)
                        continuation.yield(HistoryUpdate(transactions: [], token: HistoryToken(storeIdentifier: storeIdentifier, value: last)))
                        continue
                    }
                }
            }
            // One page per read transaction, so a long backlog is neither
            // held in memory at once nor read under one long snapshot.
            let seen = last
            let page = try await SQLiteBusyRetry.run(deadline: busyTimeout) {
                try await connection.read { db -> (through: Int64, found: [HistoryTransaction]) in
                    let through = try SQLiteHistory.currentToken(db)
                    guard through >= seen else {
                        throw StrataError(.invalidValue, "store \(path): history went back from token \(seen) to \(through): the history tables were reset")
                    }
                    guard through > seen else { return (seen, []) }
                    let found = try SQLiteHistory.transactions(db, after: seen, through: through, limit: pageSize, excludingOrigin: origin, storeIdentifier: storeIdentifier, model: model, path: path)
                    // A full page may stop short of `through`: continue after its last.
                    if found.count == pageSize, let newest = found.last?.token.value { return (newest, found) }
                    return (through, found)
                }
            }
            pending = page.found.count == pageSize
            interval = Self.nextInterval(after: interval, base: pollInterval, foundOthers: !page.found.isEmpty)
            guard page.through > last else { continue }
            // Up to the newest token, this instance's own transactions
            // included, so that none is looked at again.
            last = page.through
            continuation.yield(HistoryUpdate(transactions: page.found, token: HistoryToken(storeIdentifier: storeIdentifier, value: last)))
        }
    }
}
