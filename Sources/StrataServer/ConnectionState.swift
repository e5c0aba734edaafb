import NIOConcurrencyHelpers
import NIOCore
import StrataWire
import Synchronization

/// What one connection's event-loop handler and its async side share,
/// without locks or actor hops: whether requests may be answered on the
/// event loop, whether large answers are compressed, and when the client
/// last sent a frame.
final class ConnectionState: Sendable {
    /// When the client last sent a frame.
    let activity = ActivityClock()
    /// The frame decoder's payload limit: ``WireProtocol/helloFrameBytes``
    /// until the hello is accepted, then `max_frame_bytes`.
    let frameLimit = FrameLimit(WireProtocol.defaultMaxFrameBytes)
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
    private let answering = Atomic<Bool>(false)
    private let compressing = Atomic<Bool>(false)
    private let client = NIOLockedValueBox("")
    /// The connection's event loop (nil for a connection that is only
    /// refused, whose requests are never answered on the loop).
    private let eventLoop: (any EventLoop)?

    init(eventLoop: (any EventLoop)? = nil, maxRequestsInFlight: Int = ServerConfiguration().maxRequestsInFlight) {
        self.eventLoop = eventLoop
        limiter = InFlightLimiter(limit: maxRequestsInFlight)
    }

    /// The name the client gave in its hello (empty before).
    var clientName: String { client.withLockedValue { $0 } }

    /// Whether the event loop may answer requests itself: true from when
    /// the hello's answer has been written until the connection stops
    /// reading requests (client gone, protocol error, shutdown).
    var answersOnEventLoop: Bool { answering.load(ordering: .acquiring) }

    /// Whether answers of ``WireProtocol/compressionThreshold`` bytes or
    /// more are compressed (the client accepted it in its hello).
    var compresses: Bool { compressing.load(ordering: .relaxed) }

    /// The hello was answered (and compression enabled when agreed), by
    /// the client named `clientName`; call
    /// after handing the answer to the async writer. The flag is set by a
    /// task on the event loop, queued behind the writer's own task for the
    /// hello's answer (NIO runs a loop's tasks in order), so no answer
    /// written on the loop can precede the hello's.
    func greeted(clientName: String) {
        client.withLockedValue { $0 = clientName }
        guard let eventLoop else {
            answering.store(true, ordering: .releasing)
            return
        }
        eventLoop.execute { self.answering.store(true, ordering: .releasing) }
    }

    /// The connection reads no more requests.
    func stopAnswering() {
        answering.store(false, ordering: .releasing)
    }

    /// Compress large answers from now on.
    func enableCompression() {
        compressing.store(true, ordering: .relaxed)
    }
}
