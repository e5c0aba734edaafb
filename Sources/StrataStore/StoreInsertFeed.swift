import Foundation
import StrataModel

/// The inserts of one save, handed to a store while the caller still
/// prepares the later ones, so that the store writes the first rows while
/// the last are being made (see ``InsertStreamingStore``).
///
/// The caller names every insert up front (``temporaryIDs``, in order), then
/// supplies their values in that order, in pieces of any size, and ends
/// with the last piece or with ``fail(_:)``. The store takes rows by index
/// and waits, blocking its thread, for rows not supplied yet: a caller must
/// always supply every insert or fail the feed, or the store waits forever.
public final class StoreInsertFeed: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `temporaryIDs` is immutable and
    // Sendable; `supplied` and `failure` are read and written only while
    // `condition` is locked, and what leaves the lock is a copy.

    /// The inserts' temporary IDs, in the order their values come.
    public let temporaryIDs: [ObjectID]
    private let condition = NSCondition()
    private var supplied: [StoreChanges.Insert] = []
    private var failure: StrataError?

    /// A feed of inserts with these temporary IDs, in this order.
    public init(temporaryIDs: [ObjectID]) {
        self.temporaryIDs = temporaryIDs
        supplied.reserveCapacity(temporaryIDs.count)
    }

    /// How many inserts the feed carries.
    public var count: Int { temporaryIDs.count }

    /// Supplies the next inserts. An insert whose temporary ID is not the
    /// next of ``temporaryIDs``, or one past the last, fails the feed.
    public func supply(_ inserts: [StoreChanges.Insert]) {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        guard failure == nil else { return }
        for insert in inserts {
            let position = supplied.count
            guard position < temporaryIDs.count, temporaryIDs[position] == insert.temporaryID else {
                failure = StrataError(.invalidValue, "insert feed: \(insert.temporaryID) supplied at position \(position), which is \(position < temporaryIDs.count ? "\(temporaryIDs[position])'s" : "past the last insert")")
                return
            }
            supplied.append(insert)
        }
    }

    /// Ends the feed without its remaining inserts: a store waiting for
    /// them throws `error` (the save writes nothing). Does nothing once
    /// every insert was supplied or the feed failed.
    public func fail(_ error: StrataError) {
        condition.lock()
        if failure == nil, supplied.count < temporaryIDs.count { failure = error }
        condition.broadcast()
        condition.unlock()
    }

    /// Whether every insert was supplied.
    public var isComplete: Bool {
        condition.lock()
        defer { condition.unlock() }
        return failure == nil && supplied.count == temporaryIDs.count
    }

    /// The inserts at `positions` (within ``temporaryIDs``), waiting until
    /// they are supplied; throws the feed's failure.
    func inserts(_ positions: Range<Int>) throws(StrataError) -> [StoreChanges.Insert] {
        condition.lock()
        defer { condition.unlock() }
        while failure == nil, supplied.count < positions.upperBound { condition.wait() }
        if supplied.count >= positions.upperBound { return Array(supplied[positions]) }
        throw failure ?? StrataError(.storeSave, "insert feed ended early")
    }

    /// Every insert, waiting until all are supplied; throws the feed's failure.
    func allInserts() throws(StrataError) -> [StoreChanges.Insert] {
        try inserts(0..<temporaryIDs.count)
    }
}
