import StrataWire

/// One connection's life, as a pure state machine: events in (the hello
/// accepted, its answer queued, reading stopped for a reason, the channel
/// closed), actions out for ``ConnectionState`` to carry out. It decides
/// alone whether the event loop may answer requests, how large a frame
/// may be, when the connection stops taking requests and when its work is
/// cancelled; the event-loop handlers and the async side ask it instead of
/// keeping flags of their own. No I/O: tested event by event.
struct ConnectionStateMachine: Sendable {
    /// Why a connection reads no more requests.
    enum DrainReason: Sendable, Equatable {
        /// The client half-closed, or its stream ended.
        case inputEnded
        /// A frame broke the protocol (answered, then the connection closes).
        case protocolError
        /// The hello was refused.
        case helloRefused
        /// The server is shutting down.
        case shutdown
        /// The connection idled out.
        case idle
    }

    /// Where the connection is.
    enum State: Sendable, Equatable {
        /// Accepted, no hello yet: frames are held to the hello's size and
        /// nothing is answered on the event loop.
        case awaitingHello
        /// The hello was accepted and its answer handed to the writer; the
        /// loop waits until that answer is queued ahead of its own.
        case greeting
        /// Reading and answering requests, on the event loop too.
        case serving
        /// Reading no more requests; those running are answered.
        case draining(DrainReason)
        /// The channel is closed: nothing can be answered.
        case closed
    }

    /// What the owner must do after an event.
    enum Action: Sendable, Equatable {
        /// Nothing.
        case none
        /// Let the frame decoder take frames of up to this many bytes.
        case raiseFrameLimit(Int)
        /// Take no more requests (the in-flight limiter stops handing out
        /// slots), let the running ones finish.
        case stopTakingRequests
        /// Cancel everything the connection queued or runs.
        case cancelWork
    }

    /// The state now.
    private(set) var state: State = .awaitingHello
    /// The limit after the hello (`max_frame_bytes`).
    let maxFrameBytes: Int

    /// A connection that may take frames of up to `maxFrameBytes` once
    /// greeted.
    init(maxFrameBytes: Int) {
        self.maxFrameBytes = maxFrameBytes
    }

    /// The frame decoder's limit in this state: the hello's size until the
    /// hello is accepted.
    var frameLimit: Int {
        state == .awaitingHello ? min(WireProtocol.helloFrameBytes, maxFrameBytes) : maxFrameBytes
    }

    /// Whether the event loop may answer requests itself.
    var answersOnEventLoop: Bool { state == .serving }

    /// Whether requests are still taken.
    var takesRequests: Bool {
        switch state {
        case .awaitingHello, .greeting, .serving: true
        case .draining, .closed: false
        }
    }

    /// The hello was accepted (its answer is about to be written).
    mutating func helloAccepted() -> Action {
        guard state == .awaitingHello else { return .none }
        state = .greeting
        return .raiseFrameLimit(maxFrameBytes)
    }

    /// The hello's answer is queued: answers written on the loop from now
    /// on follow it.
    mutating func helloAnswerQueued() -> Action {
        guard state == .greeting else { return .none }
        state = .serving
        return .none
    }

    /// The connection reads no more requests, for `reason`.
    mutating func stopReading(_ reason: DrainReason) -> Action {
        switch state {
        case .awaitingHello, .greeting, .serving:
            state = .draining(reason)
            return .stopTakingRequests
        case .draining, .closed:
            return .none
        }
    }

    /// The channel closed (the client went away, or the server closed it).
    mutating func channelClosed() -> Action {
        guard state != .closed else { return .none }
        state = .closed
        return .cancelWork
    }
}
