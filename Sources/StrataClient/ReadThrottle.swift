import NIOConcurrencyHelpers
import StrataWire

/// Backpressure for streamed answers (fetch batches, backup chunks): the
/// connection stops reading from the socket while its streams hold
/// ``pauseAt`` frames their consumers have not taken, and reads again once
/// they are down to ``resumeAt``. A consumer slower than the network (a
/// fetch written to a slow pipe) then holds the server's writes back, as
/// the server does for a client that does not read, instead of buffering
/// the whole answer in memory. Frames a consumer abandons (it stopped
/// iterating) stop counting.
///
/// Reading never stops while a request waits with nothing buffered for it
/// (``ClientRouter/hasStarvingWaiter(buffered:)``): a consumer that sends
/// another request on the same connection before taking more frames
/// would otherwise wait forever for an answer left unread.
final class ReadThrottle: Sendable {
    /// Frames waiting in streams at which reading stops.
    static let pauseAt = 32
    /// Frames waiting at which reading resumes.
    static let resumeAt = 8

    private struct State {
        var waiting: [UInt64: Int] = [:]
        var total = 0
        var paused = false
        /// Applies the throttle's state to the channel (given the throttle,
        /// so that the function holds no reference to it).
        var apply: (@Sendable (ReadThrottle) -> Void)?
        /// Whether a request waits with no frame buffered for it.
        var starving: (@Sendable (_ buffered: [UInt64: Int]) -> Bool)?
    }

    private let state = NIOLockedValueBox(State())

    /// Installs what turns reading off and on (the channel's `autoRead`),
    /// applying ``isReading`` as it is when it runs.
    func attach(_ apply: @escaping @Sendable (ReadThrottle) -> Void) {
        state.withLockedValue { $0.apply = apply }
    }

    /// Installs the check for requests that wait with nothing buffered.
    func attach(starving: @escaping @Sendable (_ buffered: [UInt64: Int]) -> Bool) {
        state.withLockedValue { $0.starving = starving }
    }

    /// A request was registered: reading resumes if it may be waited for.
    func requestRegistered() {
        change(0, by: 0)
    }

    /// A frame of request `id` went into its stream.
    func yielded(_ id: UInt64) {
        change(id, by: 1)
    }

    /// The consumer of request `id`'s stream took a frame.
    func consumed(_ id: UInt64) {
        change(id, by: -1)
    }

    /// Request `id`'s stream is gone (its consumer stopped iterating, or
    /// let go of it): what it left stops counting, and later takes of it
    /// count for nothing.
    func dropped(_ id: UInt64) {
        change(id, by: 0, dropping: true)
    }

    /// Frames waiting now, in every stream.
    var waiting: Int { state.withLockedValue { $0.total } }

    /// Whether the connection should read now.
    var isReading: Bool { state.withLockedValue { !$0.paused } }

    private func change(_ id: UInt64, by delta: Int, dropping: Bool = false) {
        let apply: (@Sendable (ReadThrottle) -> Void)? = state.withLockedValue { state in
            if dropping {
                state.total -= state.waiting.removeValue(forKey: id) ?? 0
            } else if delta > 0 || state.waiting[id] != nil {
                // A take from a stream already dropped counts for nothing.
                let now = max(0, state.waiting[id, default: 0] + delta)
                state.total += now - state.waiting[id, default: 0]
                state.waiting[id] = now == 0 ? nil : now
            }
            let starving = state.starving?(state.waiting) ?? false
            if !state.paused, state.total >= Self.pauseAt, !starving, state.apply != nil {
                state.paused = true
                return state.apply
            }
            if state.paused, state.total <= Self.resumeAt || starving, state.apply != nil {
                state.paused = false
                return state.apply
            }
            return nil
        }
        // The installed function applies the state as it is when it runs
        // (see ClientConnection), so two changes racing to it cannot leave
        // the channel paused while the state says reading.
        apply?(self)
    }
}

/// A request's answer frames, each counted as taken when its consumer
/// takes it (see ``ReadThrottle``).
struct ThrottledResponses: AsyncSequence, Sendable {
    typealias Element = Strata_V1_ServerFrame

    let frames: ClientRouter.Responses
    let lease: Lease

    /// Holds a stream's place in the count: when the sequence and its
    /// iterators are all gone, what they left unconsumed stops counting.
    final class Lease: Sendable {
        let throttle: ReadThrottle
        let id: UInt64

        init(throttle: ReadThrottle, id: UInt64) {
            self.throttle = throttle
            self.id = id
        }

        deinit { throttle.dropped(id) }
    }

    init(frames: ClientRouter.Responses, throttle: ReadThrottle, id: UInt64) {
        self.frames = frames
        self.lease = Lease(throttle: throttle, id: id)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: ClientRouter.Responses.AsyncIterator
        let lease: Lease

        mutating func next() async throws -> Strata_V1_ServerFrame? {
            let frame = try await base.next()
            if frame != nil { lease.throttle.consumed(lease.id) }
            return frame
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: frames.makeAsyncIterator(), lease: lease)
    }
}
