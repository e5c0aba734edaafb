import Synchronization

/// What one connection's event-loop handler and its async side share,
/// without locks or actor hops: whether requests may be answered on the
/// event loop, whether large answers are compressed, and when the client
/// last sent a frame.
final class ConnectionState: Sendable {
    /// When the client last sent a frame.
    let activity = ActivityClock()
    private let answering = Atomic<Bool>(false)
    private let compressing = Atomic<Bool>(false)

    /// Whether the event loop may answer requests itself: true from when
    /// the hello's answer has been written until the connection stops
    /// reading requests (client gone, protocol error, shutdown).
    var answersOnEventLoop: Bool { answering.load(ordering: .acquiring) }

    /// Whether answers of ``WireProtocol/compressionThreshold`` bytes or
    /// more are compressed (the client accepted it in its hello).
    var compresses: Bool { compressing.load(ordering: .relaxed) }

    /// The hello was answered (and compression enabled when agreed).
    func greeted() {
        answering.store(true, ordering: .releasing)
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
