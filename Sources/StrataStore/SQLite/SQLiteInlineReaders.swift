import Dispatch
import GRDB
import GRDBSQLite
import NIOConcurrencyHelpers

/// Read-only connections of a store that read on the calling thread.
///
/// A read through GRDB's pool hops to the reader's dispatch queue and back:
/// two thread switches and their wake-ups per read, which cost more than
/// a small indexed query itself. A read here runs at once on the caller's
/// thread, on a connection of its own, when it can do so without waiting
/// for anything:
/// - a connection is taken only if one is free (never waited for), so a
///   caller on Swift's cooperative pool never blocks on another's read;
/// - SQLite's busy handler is off: a lock met (a WAL being recovered)
///   ends the read at once;
/// - a read is stopped once it has run for ``budget`` (SQLite's progress
///   handler, checked every ``progressOps`` virtual-machine steps), so a
///   long query holds the caller's thread no longer than that.
/// A read that cannot run here, meets a lock, runs past its budget or fails
/// in any way answers nil, having kept nothing: the caller reads the usual
/// way, through the pool, which answers (or throws) as it always did.
///
/// One connection per core at most (the cooperative pool's width), made on
/// first use; closed with the store.
final class SQLiteInlineReaders: Sendable {
    /// One read-only connection and the deadline its progress handler reads.
    ///
    /// `@unchecked Sendable`: `queue` is Sendable; `deadline` is written
    /// before each read and read by SQLite's progress handler during it,
    /// always on the thread running that read. A reader is held by one
    /// caller at a time (taken from and given back to the free list under
    /// the lock of `state`, which orders one holder's accesses before the
    /// next one's), so no two threads ever touch the pointee at once.
    private final class Reader: @unchecked Sendable {
        let queue: DatabaseQueue
        /// The monotonic time (nanoseconds) past which the read is stopped.
        /// Written before each read and read by SQLite's progress handler
        /// during it, both on the one thread running the read (the reader
        /// is held by one caller at a time, under `state`'s lock).
        let deadline: UnsafeMutablePointer<UInt64>

        init(queue: DatabaseQueue) {
            self.queue = queue
            deadline = .allocate(capacity: 1)
            deadline.initialize(to: .max)
        }

        deinit {
            deadline.deallocate()
        }
    }

    private struct State {
        var free: [Reader] = []
        var created = 0
        /// No reads here any more: closed, or a connection could not be opened.
        var unavailable = false
    }

    /// How long one read may run here.
    static let budget = Duration.milliseconds(2)
    /// Virtual-machine steps between two looks at the clock.
    static let progressOps: Int32 = 1000

    private let path: String
    private let configuration: Configuration
    private let capacity: Int
    private let budgetNanoseconds: UInt64
    private let state = NIOLockedValueBox(State())

    /// Readers of the file at `path`, opened with `configuration` made
    /// read-only and without a busy timeout.
    init(path: String, configuration: Configuration, capacity: Int, budget: Duration = SQLiteInlineReaders.budget) {
        var configuration = configuration
        configuration.readonly = true
        configuration.busyMode = .immediateError
        self.path = path
        self.configuration = configuration
        self.capacity = max(1, capacity)
        budgetNanoseconds = Self.nanoseconds(budget)
    }

    /// A duration in whole nanoseconds (0 for a negative one).
    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let components = duration.components
        return UInt64(max(0, components.seconds)) * 1_000_000_000 + UInt64(max(0, components.attoseconds) / 1_000_000_000)
    }

    /// `body`'s result, read at once on this thread (in a read transaction
    /// unless `oneStatement`: one statement reads from one snapshot alone)
    /// within `budget` (the readers' own when nil); nil when the read must
    /// go the usual way (see the type's notes).
    func read<T>(oneStatement: Bool, budget: Duration? = nil, _ body: (Database) throws -> T) -> T? {
        guard let reader = take() else { return nil }
        defer { giveBack(reader) }
        reader.deadline.pointee = DispatchTime.now().uptimeNanoseconds &+ (budget.map(Self.nanoseconds) ?? budgetNanoseconds)
        defer { reader.deadline.pointee = .max }
        do {
            return try reader.queue.unsafeRead { db -> T in
                if oneStatement { return try body(db) }
                var result: T?
                try db.inTransaction(.deferred) {
                    result = try body(db)
                    return .commit
                }
                guard let result else { throw DatabaseError(resultCode: .SQLITE_INTERNAL) }
                return result
            }
        } catch {
            return nil
        }
    }

    /// Closes every connection; later reads answer nil. A read running now
    /// finishes first (its connection is closed when given back).
    func close() {
        let readers = state.withLockedValue { state -> [Reader] in
            state.unavailable = true
            defer { state.free = [] }
            return state.free
        }
        for reader in readers { try? reader.queue.close() }
    }

    /// Returns a reader to the free list, or closes it once the readers
    /// are closed.
    private func giveBack(_ reader: Reader) {
        let kept = state.withLockedValue { state -> Bool in
            guard !state.unavailable else { return false }
            state.free.append(reader)
            return true
        }
        if !kept { try? reader.queue.close() }
    }

    /// A free reader, or a new one while fewer than `capacity` exist.
    private func take() -> Reader? {
        enum Taken { case reader(Reader), make, none }
        let taken = state.withLockedValue { state -> Taken in
            if state.unavailable { return .none }
            if let reader = state.free.popLast() { return .reader(reader) }
            guard state.created < capacity else { return .none }
            state.created += 1
            return .make
        }
        switch taken {
        case .reader(let reader):
            return reader
        case .none:
            return nil
        case .make:
            do {
                let reader = Reader(queue: try DatabaseQueue(path: path, configuration: configuration))
                try reader.queue.inDatabase { db in
                    // A first read: a file this connection cannot read
                    // (its log not shared with read-only connections) is
                    // found now, once, not at every read.
                    _ = try Row.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
                    sqlite3_progress_handler(db.sqliteConnection, Self.progressOps, stopPastDeadline, UnsafeMutableRawPointer(reader.deadline))
                }
                return reader
            } catch {
                // Not readable this way here (a file SQLite opens read-only
                // only through the pool): the pool reads everything.
                state.withLockedValue { $0.unavailable = true }
                return nil
            }
        }
    }
}

/// SQLite's progress handler for ``SQLiteInlineReaders``: stops the
/// statement (SQLITE_INTERRUPT) once the deadline `context` points to has
/// passed.
private func stopPastDeadline(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let deadline = context?.assumingMemoryBound(to: UInt64.self).pointee else { return 0 }
    return DispatchTime.now().uptimeNanoseconds > deadline ? 1 : 0
}
