import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import PostgresNIO
import StrataModel
import StrataStore

/// Follows other servers' saves to a PostgreSQL store: the PostgreSQL side
/// of ``HistoryTrackingStore/externalChanges(after:pollInterval:)``.
///
/// It keeps one connection of its own, outside the pool, that `LISTEN`s
/// on the store's channel (``PostgresHistory/channel(storeIdentifier:)``).
/// Each notification (or, should one be lost, every `fallbackInterval`)
/// wakes it to read the history after the last token it has seen, those
/// of ``origin`` (this store instance) skipped in the query, and yield them
/// in token order: a notification is a wake-up, the history is the truth.
/// A lost connection ends the stream with an error; the follower
/// (``ExternalChangeMonitor``) starts again from its last token, so
/// nothing is skipped.
struct PostgresChangeWatcher: Sendable {
    let configuration: PostgresConnection.Configuration
    let storeIdentifier: String
    let origin: String
    let model: ObjectModel
    let place: String
    let logger: Logger
    /// How often history is read with no notification.
    var fallbackInterval: Duration = .seconds(1)
    /// At most this many transactions are read (and yielded) at once.
    var pageSize = 512
    /// A read that takes longer means a lost connection (a half-open TCP
    /// connection never fails on its own): it is closed, and the stream
    /// ends with an error, so the follower reconnects.
    var readDeadline: Duration = .seconds(30)

    /// The other instances' transactions after `token` (from the store's
    /// newest transaction when nil).
    func updates(after token: Int64?) -> AsyncThrowingStream<HistoryUpdate, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: HistoryUpdate.self)
        let task = Task {
            do {
                try await watch(after: token, continuation: continuation)
                continuation.finish()
            } catch is CancellationError {
                continuation.finish()
            } catch {
                continuation.finish(throwing: PostgresErrors.strataError(error, failure: .storeOpen, doing: "\(place): following other servers' saves"))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func watch(after token: Int64?, continuation: AsyncThrowingStream<HistoryUpdate, any Error>.Continuation) async throws {
        let connection = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: Int.random(in: 1...Int.max), logger: logger)
        do {
            try await follow(connection, after: token, continuation: continuation)
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    private func follow(_ connection: PostgresConnection, after token: Int64?, continuation: AsyncThrowingStream<HistoryUpdate, any Error>.Continuation) async throws {
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let channel = PostgresHistory.channel(storeIdentifier: storeIdentifier)
        let interval = fallbackInterval
        // Listening first: a save committed while the start is read is
        // either before it or notified after.
        try await connection.listen(on: channel) { notifications in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await _ in notifications { wake.yield() }
                    throw StrataError(.storeOpen, "\(place): the notification connection ended")
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: interval)
                        wake.yield()
                    }
                }
                group.addTask {
                    try await read(connection, after: token, wakes: wakes, continuation: continuation)
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    private func read(_ connection: PostgresConnection, after token: Int64?, wakes: AsyncStream<Void>, continuation: AsyncThrowingStream<HistoryUpdate, any Error>.Continuation) async throws {
        let runner = PostgresStatementRunner(connection: connection, logger: logger)
        let current = try await withinDeadline(connection) { try await PostgresHistory.state(runner).last }
        if let token, token > current {
            throw StrataError(.invalidValue, "\(place): history token \(token) is newer than the store's newest transaction (token \(current)): history was reset, or the token is another store's")
        }
        var last = token ?? current
        var pending = last < current
        var iterator = wakes.makeAsyncIterator()
        let (pageSize, storeIdentifier, origin, model, place) = (self.pageSize, self.storeIdentifier, self.origin, self.model, self.place)
        while true {
            if !pending {
                guard await iterator.next() != nil else { return }
            }
            let seen = last
            // One snapshot per page: a purge meanwhile cannot make it skip
            // transactions without 134301.
            let page = try await withinDeadline(connection) { () async throws -> (through: Int64, found: [HistoryTransaction]) in
                try await runner.run(PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"))
                do {
                    let through = try await PostgresHistory.state(runner).last
                    guard through >= seen else {
                        throw StrataError(.invalidValue, "\(place): history went back from token \(seen) to \(through): the history tables were reset")
                    }
                    var found: [HistoryTransaction] = []
                    if through > seen {
                        found = try await PostgresHistory.transactions(runner, after: seen, through: through, limit: pageSize, excludingOrigin: origin,
                                                                       storeIdentifier: storeIdentifier, model: model, place: place)
                    }
                    try await runner.run(PostgresQuery(unsafeSQL: "COMMIT"))
                    return (through, found)
                } catch {
                    _ = try? await runner.run(PostgresQuery(unsafeSQL: "ROLLBACK"))
                    throw error
                }
            }
            guard page.through > last else {
                pending = false
                continue
            }
            // A full page may stop short of `through`: continue after its last.
            let reached = page.found.count == pageSize ? (page.found.last?.token.value ?? page.through) : page.through
            pending = page.found.count == pageSize
            last = reached
            continuation.yield(HistoryUpdate(transactions: page.found, token: HistoryToken(storeIdentifier: storeIdentifier, value: last)))
        }
    }

    /// `body`'s result, or, past ``readDeadline``, the connection closed
    /// and an error thrown, without waiting for `body` (run in a task of
    /// its own): a query on a connection the server cut may never answer,
    /// and awaiting it would hang the watcher for good. Cancelled, the
    /// connection is closed, which ends the query.
    private func withinDeadline<T: Sendable>(_ connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let deadline = readDeadline
        let place = self.place
        let settled = NIOLockedValueBox(false)
        func first() -> Bool { settled.withLockedValue { done in defer { done = true }; return !done } }
        let work = NIOLockedValueBox<Task<Void, Never>?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                // The deadline first, so that the read can stop it: a read
                // per notification must not leave a sleeping task behind.
                let timer = Task {
                    try? await Task.sleep(for: deadline)
                    if !Task.isCancelled, first() {
                        try? await connection.close()
                        continuation.resume(throwing: StrataError(.storeTimeout, "\(place): reading history took longer than \(deadline); the connection is taken as lost"))
                    }
                }
                work.withLockedValue { task in
                    task = Task {
                        do {
                            let value = try await body()
                            timer.cancel()
                            if first() { continuation.resume(returning: value) }
                        } catch {
                            timer.cancel()
                            if first() { continuation.resume(throwing: error) }
                        }
                    }
                }
            }
        } onCancel: {
            // Closing the connection ends the body's query; should it not,
            // the deadline still answers.
            connection.close().whenComplete { _ in }
            work.withLockedValue { $0?.cancel() }
        }
    }
}
