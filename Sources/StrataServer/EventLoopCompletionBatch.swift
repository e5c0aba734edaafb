import Dispatch
import NIOConcurrencyHelpers
import NIOCore

/// Brings work that ends on another thread back to one event loop in
/// batches, and flushes what that work wrote once per connection and batch.
///
/// A store's writer ends a whole commit group at once, on its own thread.
/// Handed back one by one, every save of the group would be an
/// `EventLoop.execute` of its own (a lock, a task, perhaps a wake-up) and
/// every answer a `write` system call of its own, even when many answers go
/// to one connection (a client that pipelines). Here:
/// - ``submit(_:)`` queues a completion under one lock; the first of a
///   batch schedules one task on the loop;
/// - that task runs every completion queued by then, in the order they
///   were queued;
/// - answers they write through ``write(_:to:releasing:)`` are flushed
///   once per connection when the batch ends, and the in-flight slots
///   they held are given back after the flushes: a connection that closes
///   once its slots are free never closes over an unflushed answer.
///
/// One batch per event loop (``ServerCore/completionBatch(on:)``). A batch
/// is as large as the saves its loop's connections have in flight (each
/// holds a slot until its answer is flushed). The loop must outlive what
/// is handed to it, as the server's loops outlive its connections: a task
/// given to a loop that has shut down is dropped, as `execute` drops it.
final class EventLoopCompletionBatch: Sendable {
    /// The loop the completions run on.
    let eventLoop: any EventLoop

    /// A queued completion. In a struct, the closure is stored as it is:
    /// an array of closures holds them through a reabstraction thunk,
    /// allocated for every closure appended.
    private struct Task: Sendable {
        let run: @Sendable () -> Void
    }

    private struct Queue {
        var tasks: [Task] = []
        /// Whether a task to run the queue is scheduled on the loop.
        var isScheduled = false
    }

    /// What only the loop touches.
    private final class LoopState {
        /// Whether a batch runs now.
        var isRunning = false
        /// The connections written to in this batch, each once.
        var unflushed: [ChannelHandlerContext] = []
        var unflushedIdentities: Set<ObjectIdentifier> = []
        /// The slots given back once the batch's answers are flushed.
        var releases: [InFlightLimiter] = []
        /// The queue's spare storage, swapped with the queued tasks so that
        /// a batch allocates no array.
        var spare: [Task] = []
        /// Whether a flush of ``unflushed`` is scheduled for the end of the
        /// loop's turn (``flushAtEndOfTurn(_:)``).
        var flushScheduled = false
        /// When the oldest answer waiting for the end of the turn was
        /// written (uptime nanoseconds; 0: none waits).
        var oldestWaiting: UInt64 = 0
        /// The task that ends a turn, made on first use (``hasEndTurn``) and
        /// kept: a closure made for each turn would be an allocation each.
        /// Stored and passed as its own type, never through a generic
        /// function (`??`, `Optional.map`): each such pass wraps a closure
        /// in reabstraction thunks, and storing the result back would make
        /// the chain one layer longer, and slower to call, every turn.
        var endTurn: () -> Void = {}
        var hasEndTurn = false
    }

    /// The longest an answer waits for the end of its loop's turn: past
    /// it, the answers written so far are flushed at once.
    static let maximumFlushDelay = Duration.milliseconds(1)
    /// The most connections whose answers wait for the end of a turn: with
    /// this many, they are flushed at once, so that the client reads them
    /// while the loop goes on with the rest of the turn.
    static let maximumWaiting = 8
    /// This batch's longest wait (``maximumFlushDelay`` unless a test
    /// gives another), in nanoseconds.
    private let maximumFlushDelayNanoseconds: UInt64

    /// What a task's slot holds once it ran.
    private static let done = Task(run: {})

    private let queue = NIOLockedValueBox(Queue())
    private let loopState: NIOLoopBoundBox<LoopState>

    /// A batch for the completions that end on `eventLoop` (made on any
    /// thread), whose answers wait at most `maximumFlushDelay` for the end
    /// of a turn.
    init(eventLoop: any EventLoop, maximumFlushDelay: Duration = EventLoopCompletionBatch.maximumFlushDelay) {
        self.eventLoop = eventLoop
        maximumFlushDelayNanoseconds = UInt64(maximumFlushDelay.components.seconds) * 1_000_000_000
            + UInt64(maximumFlushDelay.components.attoseconds / 1_000_000_000)
        loopState = NIOLoopBoundBox.makeBoxSendingValue(LoopState(), eventLoop: eventLoop)
    }

    /// Runs `task` on the loop, in one batch with the tasks submitted
    /// meanwhile. Any thread may call it; it never blocks on the loop.
    func submit(_ task: @escaping @Sendable () -> Void) {
        let schedules = queue.withLockedValue { queue in
            queue.tasks.append(Task(run: task))
            guard !queue.isScheduled else { return false }
            queue.isScheduled = true
            return true
        }
        if schedules { eventLoop.execute { self.run() } }
    }

    /// On the loop: flushes `context` once the loop has handled the I/O
    /// events of its current turn, with every other connection of the loop
    /// flushed so, just before the loop waits again (as Redis writes its
    /// replies). A client that reads many connections is then woken once
    /// for a group of answers, and finds the others of the group already
    /// there, rather than woken again for each answer (waking a sleeping
    /// thread is much of what writing a small answer costs). A group is
    /// the rest of the turn, but at most ``maximumWaiting`` connections or
    /// ``maximumFlushDelay`` of waiting for its oldest answer: then the
    /// answers written so far leave at once, and the client reads them
    /// while the loop goes on with the turn. Within a batch (``submit(_:)``)
    /// the flush waits for the batch's end, as ``write(_:to:releasing:)``'s do.
    func flushAtEndOfTurn(_ context: ChannelHandlerContext) {
        let state = loopState.value
        if state.unflushedIdentities.insert(ObjectIdentifier(context)).inserted {
            state.unflushed.append(context)
        }
        guard !state.isRunning else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        if state.oldestWaiting == 0 {
            state.oldestWaiting = now
        } else if state.unflushed.count >= Self.maximumWaiting || now &- state.oldestWaiting >= maximumFlushDelayNanoseconds {
            // A long turn (many connections ready at once): what waited
            // long enough leaves now.
            flushUnflushed()
            return
        }
        guard !state.flushScheduled else { return }
        state.flushScheduled = true
        // Run after the turn's I/O events: a task enqueued on the loop from
        // the loop needs no wake-up. Weak: the batch holds the task, and a
        // batch let go before its loop ran the task has nothing to flush.
        if !state.hasEndTurn {
            state.endTurn = { [weak self] in self?.endTurn() }
            state.hasEndTurn = true
        }
        eventLoop.assumeIsolated().execute(state.endTurn)
    }

    /// The end of a turn in which answers were written: flushes them.
    private func endTurn() {
        loopState.value.flushScheduled = false
        flushUnflushed()
    }

    /// Flushes the connections written to since the last flush.
    private func flushUnflushed() {
        let state = loopState.value
        state.oldestWaiting = 0
        for context in state.unflushed { context.flush() }
        state.unflushed.removeAll(keepingCapacity: true)
        state.unflushedIdentities.removeAll(keepingCapacity: true)
    }

    /// On the loop: writes `buffer` (a whole frame) through `context` and
    /// gives back one of `limiter`'s slots once it is flushed. Within a
    /// batch the flush waits for the batch's end (one per connection);
    /// outside one it is immediate.
    func write(_ buffer: ByteBuffer, to context: ChannelHandlerContext, releasing limiter: InFlightLimiter) {
        let state = loopState.value
        guard state.isRunning else {
            context.writeAndFlush(NIOAny(buffer), promise: nil)
            limiter.release()
            return
        }
        context.write(NIOAny(buffer), promise: nil)
        if state.unflushedIdentities.insert(ObjectIdentifier(context)).inserted {
            state.unflushed.append(context)
        }
        state.releases.append(limiter)
    }

    /// On the loop: runs the queued tasks, then the flushes, then gives
    /// back the slots of what was flushed.
    private func run() {
        let state = loopState.value
        var tasks = state.spare
        state.spare = []
        queue.withLockedValue { queue in
            swap(&queue.tasks, &tasks)
            queue.isScheduled = false
        }
        state.isRunning = true
        for index in tasks.indices {
            // Each task is let go as soon as it ran, as the loop's own
            // tasks are: what it holds was mostly allocated by the
            // writer, and its frees are spread over the batch rather than
            // made together at its end, while the writer allocates for its
            // next group.
            let task = tasks[index]
            tasks[index] = Self.done
            task.run()
        }
        state.isRunning = false
        tasks.removeAll(keepingCapacity: true)
        state.spare = tasks
        flushUnflushed()
        // A slot given back may let a waiting request run, on this loop
        // too: the batch's state is clear by then.
        for limiter in state.releases { limiter.release() }
        state.releases.removeAll(keepingCapacity: true)
    }
}
