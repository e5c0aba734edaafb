#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
/// - a read is stopped once it has used ``budget`` of CPU time past its
///   deadline (SQLite's progress handler, checked every ``progressOps``
///   virtual-machine steps), so a long query uses the caller's thread for
///   no longer than that; a read whose thread was mostly off the CPU (a
///   busy host, the disk) goes on until ``wallBudgets`` budgets of wall
///   time have passed, and is stopped then.
/// A read that cannot run here, meets a lock, runs past its budget or fails
/// in any way answers nil, having kept nothing: the caller reads the usual
/// way, through the pool, which answers (or throws) as it always did.
///
/// Bounds on how long a read holds its thread besides the budget: a value
/// longer than ``maximumValueBytes`` ends the read (SQLite's length limit),
/// and callers leave statements with regular expressions, whose one step
/// can take any time, to the pool.
///
/// The connections (as many as asked, opened with the readers, when the
/// store opens: never on a caller's thread) are closed with the store.
final class SQLiteInlineReaders: Sendable {
    /// What a read's progress handler reads and writes: the deadline and
    /// the thread's CPU time when the handler first ran.
    struct Clock {
        /// The monotonic time (nanoseconds) past which the read is stopped
        /// if it used its time on the CPU.
        var deadline: UInt64 = .max
        /// The read's budget (nanoseconds).
        var allowed: UInt64 = .max
        /// The monotonic time past which the read is stopped whatever it
        /// used (``wallBudgets`` budgets from its start).
        var lastDeadline: UInt64 = .max
        /// The thread's CPU time (nanoseconds) at the handler's first call
        /// in this read; 0 until then (and when the clock cannot be read).
        var startedOnCPU: UInt64 = 0

        /// A clock for a read of `allowed` nanoseconds starting at `now`
        /// (saturating: a budget too large for the clock never ends).
        init(allowed: UInt64, now: UInt64) {
            let (first, carry) = now.addingReportingOverflow(allowed)
            deadline = carry ? .max : first
            self.allowed = allowed
            let (wall, overflow) = allowed.multipliedReportingOverflow(by: SQLiteInlineReaders.wallBudgets)
            let (last, lastCarry) = now.addingReportingOverflow(wall)
            lastDeadline = overflow || lastCarry ? .max : last
        }

        /// No read.
        init() {}

        /// Whether the read must stop at monotonic time `now`: past its
        /// deadline having used its budget on the CPU (`onCPU`, the
        /// thread's CPU time now; a slow statement), or past its last
        /// deadline however little it used (its thread waits for the disk,
        /// or hardly runs). Past the deadline with less CPU time used, the
        /// thread was descheduled (a busy host): the read goes on, rather
        /// than being done again elsewhere.
        func mustStop(now: UInt64, onCPU: @autoclosure () -> UInt64) -> Bool {
            guard now > deadline else { return false }
            if now > lastDeadline { return true }
            return SQLiteInlineReaders.usedItsTime(startedOnCPU: startedOnCPU, now: onCPU(), allowed: allowed)
        }
    }

    /// How many budgets of wall time a read may take, when it was off the
    /// CPU for most of them, before it is stopped all the same.
    static let wallBudgets: UInt64 = 4

    /// Whether a read whose thread's CPU time went from `startedOnCPU` to
    /// `now` used its budget (`allowed`); an unknown time (0) counts as used.
    static func usedItsTime(startedOnCPU: UInt64, now: UInt64, allowed: UInt64) -> Bool {
        startedOnCPU == 0 || now == 0 || now &- startedOnCPU >= allowed
    }

    /// One read-only connection and the clock its progress handler reads.
    ///
    /// `@unchecked Sendable`: `queue` is Sendable; `clock` is written
    /// before and after each read and read and written by SQLite's progress
    /// handler during it, always on the thread running that read. A reader
    /// is held by one caller at a time (taken from and given back to the
    /// free list under the lock of `state`, which orders one holder's
    /// accesses before the next one's), so no two threads ever touch the
    /// pointee at once.
    private final class Reader: @unchecked Sendable {
        let queue: DatabaseQueue
        let clock: UnsafeMutablePointer<Clock>

        init(queue: DatabaseQueue) {
            self.queue = queue
            clock = .allocate(capacity: 1)
            clock.initialize(to: Clock())
        }

        deinit {
            // The connection (and its progress handler, which reads the
            // clock) goes first.
            try? queue.close()
            clock.deallocate()
        }
    }

    /// A reader that is free, and the thread that last read with it.
    private struct FreeReader {
        let reader: Reader
        let thread: UInt
    }

    private struct State {
        /// Taken by the thread that last read with one if it can (its
        /// connection's pages and statements are then in that core's
        /// caches, not another's: two event loops taking turns with one
        /// connection moved its memory between cores at every read), else
        /// the last given back.
        var free: [FreeReader] = []
        /// No reads here any more: closed, or no connection could be opened.
        var unavailable = false
        /// Statements (their SQL) that used their budget's time here lately:
        /// the pool reads them at once instead of after a budget spent for
        /// nothing. Forgotten when full or after ``slowMemory`` (the data
        /// may have changed).
        var slow: Set<String> = []
        var slowSince = ContinuousClock.now
        /// Statements stopped lately without having used their time (the
        /// thread was off the CPU: descheduled, or waiting for the disk),
        /// by how many times in a row.
        var strikes: [String: Int] = [:]
    }

    /// How many stops in a row without the time used make a statement slow.
    static let strikesToSlow = 3

    /// How long a statement found slow is left to the pool.
    static let slowMemory = Duration.seconds(60)
    /// The most statements remembered as slow.
    static let maximumSlowStatements = 256

    /// How long one read may run here.
    static let budget = Duration.milliseconds(2)
    /// Virtual-machine steps between two looks at the clock.
    static let progressOps: Int32 = 1000
    /// The longest text or blob a read here takes (SQLite's
    /// `SQLITE_LIMIT_LENGTH` on these connections): a longer one ends the
    /// read, and the pool reads it.
    static let maximumValueBytes: Int32 = 1 << 20
    /// The most connections a store keeps for reads here.
    static let maximumCapacity = 4

    private let budgetNanoseconds: UInt64
    private let state = NIOLockedValueBox(State())

    /// `capacity` readers (at most ``maximumCapacity``) of the file at
    /// `path`, opened now with `configuration` made read-only and without
    /// a busy timeout. A file they cannot read (its log not shared with
    /// read-only connections, no descriptor left) leaves every read to the
    /// pool.
    init(path: String, configuration: Configuration, capacity: Int, budget: Duration = SQLiteInlineReaders.budget) {
        var configuration = configuration
        configuration.readonly = true
        configuration.busyMode = .immediateError
        budgetNanoseconds = Self.nanoseconds(budget)
        var readers: [Reader] = []
        for _ in 0..<min(max(1, capacity), Self.maximumCapacity) {
            guard let reader = Self.open(path: path, configuration: configuration) else { break }
            readers.append(reader)
        }
        state.withLockedValue { state in
            state.free = readers.map { FreeReader(reader: $0, thread: 0) }
            state.unavailable = readers.isEmpty
        }
    }

    /// One reader, or nil when the file cannot be read so.
    private static func open(path: String, configuration: Configuration) -> Reader? {
        do {
            let reader = Reader(queue: try DatabaseQueue(path: path, configuration: configuration))
            try reader.queue.inDatabase { db in
                // A first read: a file this connection cannot read is
                // found now, once, not at every read.
                _ = try Row.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
                sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_LENGTH, maximumValueBytes)
                sqlite3_progress_handler(db.sqliteConnection, progressOps, stopPastDeadline, UnsafeMutableRawPointer(reader.clock))
            }
            return reader
        } catch {
            return nil
        }
    }

    /// The CPU time this thread has used, in nanoseconds (0 when unknown).
    static func threadCPUNanoseconds() -> UInt64 {
        var time = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return 0 }
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// A duration in whole nanoseconds (0 for a negative one).
    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let components = duration.components
        let (seconds, overflow) = UInt64(max(0, components.seconds)).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        let (total, carry) = seconds.addingReportingOverflow(UInt64(max(0, components.attoseconds) / 1_000_000_000))
        return carry ? .max : total
    }

    /// `body`'s result, read at once on this thread (in a read transaction
    /// unless `oneStatement`: one statement reads from one snapshot alone)
    /// within `budget` (the readers' own when nil); nil when the read must
    /// go the usual way (see the type's notes).
    ///
    /// `statement` names the read (its SQL) when it is one statement: one
    /// that ran past its budget is left to the pool for a while
    /// (``slowMemory``) without being tried here.
    func read<T>(oneStatement: Bool, budget: Duration? = nil, statement: String? = nil, _ body: (Database) throws -> T) -> T? {
        guard let reader = take(unlessSlow: statement) else { return nil }
        defer { giveBack(reader) }
        let allowed = budget.map(Self.nanoseconds) ?? budgetNanoseconds
        reader.clock.pointee = Clock(allowed: allowed, now: DispatchTime.now().uptimeNanoseconds)
        defer { reader.clock.pointee = Clock() }
        do {
            let result = try reader.queue.unsafeRead { db -> T in
                if oneStatement { return try body(db) }
                return try SQLiteStatementRunner.inDeferredTransaction(db) { try body(db) }
            }
            if let statement { completed(statement) }
            return result
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            if let statement { stopped(statement, usedOnCPU: reader.clock.pointee.startedOnCPU, allowed: allowed) }
            return nil
        } catch {
            return nil
        }
    }

    /// Notes that `statement` was stopped at its deadline; the thread's CPU
    /// time was `startedOnCPU` at the progress handler's first call (0 when
    /// unknown). A statement that used its budget on the CPU is slow at
    /// once; one stopped without (at its last deadline: waiting for the
    /// disk, or hardly running on a busy host) only after
    /// ``strikesToSlow`` stops in a row with no completed read between
    /// them.
    private func stopped(_ statement: String, usedOnCPU startedOnCPU: UInt64, allowed: UInt64) {
        let usedItsTime = Self.usedItsTime(startedOnCPU: startedOnCPU, now: Self.threadCPUNanoseconds(), allowed: allowed)
        let strikes = state.withLockedValue { state -> Int in
            if usedItsTime { return Self.strikesToSlow }
            if state.strikes.count >= Self.maximumSlowStatements { state.strikes.removeAll(keepingCapacity: true) }
            state.strikes[statement, default: 0] += 1
            return state.strikes[statement] ?? 0
        }
        if strikes >= Self.strikesToSlow { rememberSlow(statement) }
    }

    /// Forgets the stops of `statement`, which completed here.
    private func completed(_ statement: String) {
        state.withLockedValue { state in
            if !state.strikes.isEmpty { state.strikes[statement] = nil }
        }
    }

    /// Leaves `statement` to the pool for a while (``slowMemory``), as one
    /// that ran past its budget: for a read that found more rows than its
    /// caller reads at once.
    func leaveToPool(_ statement: String) {
        rememberSlow(statement)
    }

    /// Whether `statement` is left to the pool now (found slow, or too
    /// large to read here, within ``slowMemory``).
    func leavesToPool(_ statement: String) -> Bool {
        state.withLockedValue { state in state.slow.contains(statement) && state.slowSince.duration(to: .now) <= Self.slowMemory }
    }

    /// Notes that `statement` ran past its budget.
    private func rememberSlow(_ statement: String) {
        state.withLockedValue { state in
            if state.slow.count >= Self.maximumSlowStatements || state.slowSince.duration(to: .now) > Self.slowMemory {
                state.slow.removeAll(keepingCapacity: true)
                state.slowSince = .now
            }
            state.slow.insert(statement)
            state.strikes[statement] = nil
        }
    }

    /// Closes every connection; later reads answer nil. A read running now
    /// finishes first (its connection is closed when given back).
    func close() {
        let readers = state.withLockedValue { state -> [Reader] in
            state.unavailable = true
            defer { state.free = [] }
            return state.free.map(\.reader)
        }
        for reader in readers { try? reader.queue.close() }
    }

    /// Returns a reader to the free list, or closes it once the readers
    /// are closed.
    private func giveBack(_ reader: Reader) {
        let thread = Self.currentThread()
        let kept = state.withLockedValue { state -> Bool in
            guard !state.unavailable else { return false }
            state.free.append(FreeReader(reader: reader, thread: thread))
            return true
        }
        if !kept { try? reader.queue.close() }
    }

    /// A free reader, if any and `statement` was not found slow lately.
    private func take(unlessSlow statement: String?) -> Reader? {
        let thread = Self.currentThread()
        return state.withLockedValue { state in
            guard !state.unavailable else { return nil }
            if let statement, !state.slow.isEmpty, state.slow.contains(statement) {
                guard state.slowSince.duration(to: .now) > Self.slowMemory else { return nil }
                state.slow.removeAll(keepingCapacity: true)
            }
            if let index = state.free.lastIndex(where: { $0.thread == thread }) {
                return state.free.remove(at: index).reader
            }
            return state.free.popLast()?.reader
        }
    }

    /// The calling thread's identity, for a reader's affinity.
    private static func currentThread() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}

/// SQLite's progress handler for ``SQLiteInlineReaders``: notes the
/// thread's CPU time at its first call in a read, and stops the statement
/// (SQLITE_INTERRUPT) once the clock `context` points to says it must
/// (``SQLiteInlineReaders/Clock/mustStop(now:onCPU:)``).
private func stopPastDeadline(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let clock = context?.assumingMemoryBound(to: SQLiteInlineReaders.Clock.self) else { return 0 }
    if clock.pointee.startedOnCPU == 0 { clock.pointee.startedOnCPU = SQLiteInlineReaders.threadCPUNanoseconds() }
    return clock.pointee.mustStop(now: DispatchTime.now().uptimeNanoseconds, onCPU: SQLiteInlineReaders.threadCPUNanoseconds()) ? 1 : 0
}
