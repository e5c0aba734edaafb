import Foundation
import StrataModel

/// The inserts of one save, handed to a store while the caller still
/// prepares the later ones, so that the store writes the first rows while
/// the last are being made (see ``InsertStreamingStore``).
///
/// The caller names every insert up front (``temporaryIDs``, in order), then
/// supplies their values in that order, in pieces of any size, and ends
/// with the last piece or with ``fail(_:)``. The store takes rows by index
/// and waits, blocking its writer, for rows not supplied yet; a caller that
/// supplies nothing more for ``stallLimit`` fails the save (134090) and
/// frees the writer. A feed serves one save.
public final class StoreInsertFeed: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `temporaryIDs` and `stallLimit` are
    // immutable and Sendable; `supplied`, `failure` and `isClaimed` are read and written
    // only while `condition` is locked, and what leaves the lock is a copy
    // (or, once every insert is supplied, the array no one appends to).

    /// The inserts' temporary IDs, in the order their values come.
    public let temporaryIDs: [ObjectID]
    /// How long the store waits for the next piece before it gives up.
    public let stallLimit: Duration
    private let condition = NSCondition()
    private var supplied: [StoreChanges.Insert] = []
    private var failure: StrataError?
    private var isClaimed = false

    /// A feed of inserts with these temporary IDs, in this order; the store
    /// waits at most `stallLimit` for each next piece.
    public init(temporaryIDs: [ObjectID], stallLimit: Duration = .seconds(30)) {
        self.temporaryIDs = temporaryIDs
        self.stallLimit = stallLimit
        supplied.reserveCapacity(temporaryIDs.count)
    }

    /// How many inserts the feed carries.
    public var count: Int { temporaryIDs.count }

    /// Supplies the next inserts; false (and the feed fails, the save
    /// writing nothing) when one is not the next of ``temporaryIDs`` or
    /// lies past the last, or when the feed had already failed.
    @discardableResult
    public func supply(_ inserts: [StoreChanges.Insert]) -> Bool {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        guard failure == nil else { return false }
        let start = supplied.count
        for (offset, insert) in inserts.enumerated() {
            let position = start + offset
            guard position < temporaryIDs.count, temporaryIDs[position] == insert.temporaryID else {
                failure = StrataError(.invalidValue, "insert feed: \(insert.temporaryID) supplied at position \(position), which is \(position < temporaryIDs.count ? "\(temporaryIDs[position])'s" : "past the last insert"); nothing is saved")
                return false
            }
        }
        supplied += inserts
        return true
    }

    /// Ends the feed without its remaining inserts: the store's save throws
    /// `error` and writes nothing. Does nothing once every insert was
    /// supplied or the feed failed.
    public func fail(_ error: StrataError) {
        condition.lock()
        if failure == nil, supplied.count < temporaryIDs.count { failure = error }
        condition.broadcast()
        condition.unlock()
    }

    /// Whether every insert was supplied (and the feed did not fail).
    public var isComplete: Bool { completeInserts != nil }

    /// Every insert once the feed is complete (shared, not copied); nil
    /// before, or when it failed.
    public var completeInserts: [StoreChanges.Insert]? {
        condition.lock()
        defer { condition.unlock() }
        return failure == nil && supplied.count == temporaryIDs.count ? supplied : nil
    }

    /// Marks the feed as taken by a save; false when a save already took it.
    package func claim() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !isClaimed else { return false }
        isClaimed = true
        return true
    }

    /// The inserts at `positions` (within ``temporaryIDs``), waiting until
    /// they are supplied, at most ``stallLimit`` without a new piece; throws
    /// the feed's failure, or 134090 when the supplier stalled.
    package func inserts(_ positions: Range<Int>) throws(StrataError) -> [StoreChanges.Insert] {
        condition.lock()
        defer { condition.unlock() }
        try waitLocked(for: positions.upperBound)
        return Array(supplied[positions])
    }

    /// Every insert (shared, not copied), waiting as ``inserts(_:)`` does.
    package func allInserts() throws(StrataError) -> [StoreChanges.Insert] {
        condition.lock()
        defer { condition.unlock() }
        try waitLocked(for: temporaryIDs.count)
        return supplied
    }

    /// With the lock held: waits until `count` inserts are supplied.
    private func waitLocked(for count: Int) throws(StrataError) {
        let seconds = Double(stallLimit.components.seconds) + Double(stallLimit.components.attoseconds) / 1e18
        while failure == nil, supplied.count < count {
            let before = supplied.count
            if !condition.wait(until: Date(timeIntervalSinceNow: seconds)), supplied.count == before, failure == nil {
                failure = StrataError(.storeTimeout, "insert feed: nothing supplied for \(stallLimit) after insert \(before) of \(temporaryIDs.count); nothing is saved")
            }
        }
        if let failure { throw failure }
    }
}
