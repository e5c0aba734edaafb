import NIOConcurrencyHelpers
import NIOCore
import StrataAuth
import StrataWire
import Synchronization

/// What one connection's event-loop handlers and its async side share:
/// its ``ConnectionStateMachine`` (whether the loop may answer, the frame
/// limit, whether requests are taken, when work is cancelled), which it
/// runs under a lock and whose actions it carries out; the in-flight
/// limits; whether large answers are compressed; when the client last
/// sent a frame.
final class ConnectionState: Sendable {
    /// When the client last sent a frame or had its last request answered.
    let activity = ActivityClock()
    /// The frame decoder's payload limit, as the state machine sets it:
    /// ``WireProtocol/helloFrameBytes`` until the hello is accepted, then
    /// `max_frame_bytes`.
    let frameLimit: FrameLimit
    /// The connection's requests in flight, wherever they start (the
    /// connection waits for all of them before closing).
    let limiter: InFlightLimiter
    /// Fetches of objects or IDs that may hold their results at once: a
    /// fetch's result is read whole before its batches are sent, so this
    /// bounds what a client that does not read its answers can make the
    /// connection hold (the other fetches wait, holding nothing).
    let fetchSlots = InFlightLimiter(limit: ConnectionState.fetchesAtOnce)
    /// How many fetches of objects or IDs run at once per connection.
    static let fetchesAtOnce = 4
    private let machine: NIOLockedValueBox<ConnectionStateMachine>
    /// The machine's `answersOnEventLoop`, copied under its lock after each
    /// event, so the event loop reads it per frame without the lock.
    private let answering = Atomic<Bool>(false)
    /// Cancels the connection's work (set by the async side once it runs).
    private let canceller = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)
    private let compressing = Atomic<Bool>(false)
    private let client = NIOLockedValueBox<(name: String, identity: Identity?, policy: AccessPolicy?)>(("", nil, nil))
    /// The connection's event loop (nil for a connection that is only
    /// refused, whose requests are never answered on the loop).
    private let eventLoop: (any EventLoop)?

    init(eventLoop: (any EventLoop)? = nil, maxRequestsInFlight: Int = ServerConfiguration().maxRequestsInFlight, maxFrameBytes: Int = WireProtocol.defaultMaxFrameBytes) {
        self.eventLoop = eventLoop
        limiter = InFlightLimiter(limit: maxRequestsInFlight, activity: activity)
        let machine = ConnectionStateMachine(maxFrameBytes: maxFrameBytes)
        frameLimit = FrameLimit(machine.frameLimit)
        self.machine = NIOLockedValueBox(machine)
    }

    /// The name the client gave in its hello (empty before).
    var clientName: String { client.withLockedValue { $0.name } }

    /// Who the hello proved the client to be; nil before the hello and on
    /// a server that authenticates no one.
    var identity: Identity? { client.withLockedValue { $0.identity } }

    /// The access rules as they bind the client; nil when none do (no
    /// rules, or an `admin`).
    var policy: AccessPolicy? { client.withLockedValue { $0.policy } }

    /// The state machine's state now.
    var connectionState: ConnectionStateMachine.State { machine.withLockedValue { $0.state } }

    /// Whether the event loop may answer requests itself: from when the
    /// hello's answer has been queued until the connection stops reading
    /// requests (client gone, protocol error, shutdown).
    var answersOnEventLoop: Bool { answering.load(ordering: .acquiring) }

    /// Whether answers of ``WireProtocol/compressionThreshold`` bytes or
    /// more are compressed (the client accepted it in its hello).
    var compresses: Bool { compressing.load(ordering: .relaxed) }

    /// The hello was accepted: frames up to `max_frame_bytes` from now on.
    /// Call before handing its answer to the writer.
    func helloAccepted() {
        perform { $0.helloAccepted() }
    }

    /// The hello was answered (and compression enabled when agreed), by
    /// the client named `clientName`, proved to be `identity` (nil when the
    /// server authenticates no one); call after handing the answer to the
    /// async writer. The event reaches the state machine in a task on the
    /// event loop, queued behind the writer's own task for the hello's
    /// answer (NIO runs a loop's tasks in order), so no answer written on
    /// the loop can precede the hello's.
    func greeted(clientName: String, identity: Identity? = nil, policy: AccessPolicy? = nil) {
        client.withLockedValue { $0 = (clientName, identity, policy) }
        guard let eventLoop else {
            perform { $0.helloAnswerQueued() }
            return
        }
        eventLoop.execute { self.perform { $0.helloAnswerQueued() } }
    }

    /// The connection reads no more requests, for `reason`.
    func stopReading(_ reason: ConnectionStateMachine.DrainReason) {
        perform { $0.stopReading(reason) }
    }

    /// The channel closed: the connection's work is cancelled.
    func channelClosed() {
        perform { $0.channelClosed() }
    }

    /// Registers how to cancel the connection's work; runs it at once when
    /// the channel has closed already.
    func onCancel(_ cancel: @escaping @Sendable () -> Void) {
        canceller.withLockedValue { $0 = cancel }
        if connectionState == .closed { cancel() }
    }

    /// Compress large answers from now on.
    func enableCompression() {
        compressing.store(true, ordering: .relaxed)
    }

    /// Feeds one event to the state machine and carries out its action
    /// (outside the lock).
    private func perform(_ event: (inout ConnectionStateMachine) -> ConnectionStateMachine.Action) {
        let action = machine.withLockedValue { machine in
            let action = event(&machine)
            answering.store(machine.answersOnEventLoop, ordering: .releasing)
            return action
        }
        switch action {
        case .none:
            break
        case .raiseFrameLimit(let bytes):
            frameLimit.set(bytes)
        case .stopTakingRequests:
            limiter.stopTaking()
        case .cancelWork:
            limiter.stopTaking()
            canceller.withLockedValue { $0 }?()
        }
    }
}
