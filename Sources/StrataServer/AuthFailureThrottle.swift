import Metrics
import NIOConcurrencyHelpers

/// Slows down guessing of the auth token: every failed hello from one
/// source address is answered no sooner than the previous one's answer
/// plus a delay that doubles with each recent failure (from
/// ``baseDelay`` up to ``maximumDelay``), so an address gets at most a few
/// guesses a second however many connections it opens. An address's
/// record is forgotten once it has not failed for ``forgetAfter``; at
/// most ``capacity`` addresses are tracked (the stalest are dropped
/// first).
final class AuthFailureThrottle: Sendable {
    /// The delay after the first failure.
    static let baseDelay: Duration = .milliseconds(100)
    /// The longest delay between two answers to one address.
    static let maximumDelay: Duration = .seconds(5)
    /// How long an address's failures are remembered.
    static let forgetAfter: Duration = .seconds(60)
    /// How many addresses are tracked at most.
    static let capacity = 10_000

    private struct Record {
        var failures: Int
        /// When the last failure's answer goes out.
        var nextAnswer: ContinuousClock.Instant
    }

    private let records = NIOLockedValueBox<[String: Record]>([:])
    private let counter = Counter(label: "strata_auth_failures_total")

    /// Records a failure from `address` and returns how long to wait before
    /// answering it.
    func failed(from address: String, now: ContinuousClock.Instant = .now) -> Duration {
        counter.increment()
        return records.withLockedValue { records in
            var record = records[address].flatMap { now - $0.nextAnswer < Self.forgetAfter ? $0 : nil }
                ?? Record(failures: 0, nextAnswer: now)
            record.failures += 1
            let step = min(Self.baseDelay * (1 << min(record.failures - 1, 16)), Self.maximumDelay)
            record.nextAnswer = max(record.nextAnswer, now) + step
            if records[address] == nil, records.count >= Self.capacity {
                Self.dropStalest(&records, now: now)
            }
            records[address] = record
            return record.nextAnswer - now
        }
    }

    /// Failures remembered for `address` (for tests and logs).
    func failures(from address: String) -> Int {
        records.withLockedValue { $0[address]?.failures ?? 0 }
    }

    /// Forgets expired records, or else the stalest tenth.
    private static func dropStalest(_ records: inout [String: Record], now: ContinuousClock.Instant) {
        records = records.filter { now - $0.value.nextAnswer < forgetAfter }
        guard records.count >= capacity else { return }
        let stalest = records.sorted { $0.value.nextAnswer < $1.value.nextAnswer }.prefix(capacity / 10)
        for (address, _) in stalest { records[address] = nil }
    }
}
