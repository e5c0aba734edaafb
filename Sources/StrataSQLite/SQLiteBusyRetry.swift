import Foundation
import GRDB

/// Retries work that found the database locked by another connection (in
/// this process or another), with exponential backoff and jitter, until a
/// deadline.
///
/// SQLite's busy handler already waits for most locks (the store's busy
/// timeout); what it cannot wait for (a WAL being recovered by another
/// process, a lock met where SQLite does not call the handler) surfaces as
/// `SQLITE_BUSY` / `SQLITE_LOCKED`, and is retried here so that ordinary
/// contention never reaches a client. Past the deadline the last error is
/// thrown (the store maps it to 134090).
enum SQLiteBusyRetry {
    /// Whether the error is a lock held by another connection.
    static func isBusy(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
    }

    /// Runs `body`, again after a pause while it throws a busy error and
    /// the deadline (from now) has not passed.
    static func run<T>(deadline: Duration, _ body: () async throws -> T) async throws -> T {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: deadline)
        var pause = Duration.milliseconds(1)
        while true {
            do {
                return try await body()
            } catch let error as DatabaseError where isBusy(error) {
                let now = clock.now
                guard now < end else { throw error }
                let jittered = pause * Double.random(in: 0.5...1.5)
                try await Task.sleep(for: min(jittered, now.duration(to: end)))
                pause = min(pause * 2, .milliseconds(100))
            }
        }
    }

    /// ``run(deadline:_:)`` for work that holds its thread (the writer's
    /// queue, which can do nothing else until the lock is free): the
    /// pauses block the thread.
    static func runBlocking<T>(deadline: Duration, _ body: () throws -> T) throws -> T {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: deadline)
        var pause = Duration.milliseconds(1)
        while true {
            do {
                return try body()
            } catch let error as DatabaseError where isBusy(error) {
                let now = clock.now
                guard now < end else { throw error }
                let jittered = min(pause * Double.random(in: 0.5...1.5), now.duration(to: end))
                let seconds = Double(jittered.components.seconds) + Double(jittered.components.attoseconds) / 1e18
                Thread.sleep(forTimeInterval: seconds)
                pause = min(pause * 2, .milliseconds(100))
            }
        }
    }
}
