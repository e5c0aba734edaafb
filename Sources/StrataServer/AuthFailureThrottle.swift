import Metrics
import NIOConcurrencyHelpers

/// Slows down guessing of the auth token. Once an address has failed a
/// hello, every later hello from it (right or wrong, on any connection)
/// waits for a turn before its token is even checked: turns are spaced by
/// a step that doubles with each failure (from ``baseDelay`` up to
/// ``maximumDelay``) and handed out one after another, so an address gets
/// at most a few checks a second however many connections it opens, and
/// closing a connection early gains nothing. An address's record is
/// forgotten once it has not failed for ``forgetAfter``; at most
/// ``capacity`` addresses are tracked (the stalest are dropped first).
final class AuthFailureThrottle: Sendable {
    /// The step after the first failure.
    static let baseDelay: Duration = .milliseconds(100)
    /// The longest step between two checks for one address.
    static let maximumDelay: Duration = .seconds(5)
    /// How long an address's failures are remembered.
    static let forgetAfter: Duration = .seconds(60)
    /// How many addresses are tracked at most.
    static let capacity = 10_000

    private struct Record {
        var failures: Int
        /// When the last turn handed out comes.
        var lastTurn: ContinuousClock.Instant
        /// When the address last failed.
        var lastFailure: ContinuousClock.Instant
    }

    private let records = NIOLockedValueBox<[String: Record]>([:])
    private let counter = Counter(label: "strata_auth_failures_total")

    /// How long a hello from `address` must wait before its token is
    /// checked: zero for an address with no recent failure; otherwise its
    /// turn, which this call reserves.
    func admission(for address: String, now: ContinuousClock.Instant = .now) -> Duration {
        records.withLockedValue { records in
            guard var record = records[address], now - record.lastFailure < Self.forgetAfter else { return .zero }
            let turn = max(record.lastTurn, now) + Self.step(after: record.failures)
            record.lastTurn = turn
            records[address] = record
            return turn - now
        }
    }

    /// Records a failed hello from `address`.
    func failed(from address: String, now: ContinuousClock.Instant = .now) {
        counter.increment()
        records.withLockedValue { records in
            var record = records[address].flatMap { now - $0.lastFailure < Self.forgetAfter ? $0 : nil }
                ?? Record(failures: 0, lastTurn: now, lastFailure: now)
            record.failures += 1
            record.lastFailure = now
            if records[address] == nil, records.count >= Self.capacity {
                Self.dropStalest(&records, now: now)
            }
            records[address] = record
        }
    }

    /// Failures remembered for `address` (for tests and logs).
    func failures(from address: String) -> Int {
        records.withLockedValue { $0[address]?.failures ?? 0 }
    }

    /// The spacing of turns after `failures` failures.
    static func step(after failures: Int) -> Duration {
        min(baseDelay * (1 << min(max(failures - 1, 0), 16)), maximumDelay)
    }

    /// Forgets expired records, or else the stalest tenth.
    private static func dropStalest(_ records: inout [String: Record], now: ContinuousClock.Instant) {
        records = records.filter { now - $0.value.lastFailure < forgetAfter }
        guard records.count >= capacity else { return }
        let stalest = records.sorted { $0.value.lastFailure < $1.value.lastFailure }.prefix(capacity / 10)
        for (address, _) in stalest { records[address] = nil }
    }
}
