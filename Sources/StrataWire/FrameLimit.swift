import Synchronization

/// The payload limit a connection's ``FrameDecoder`` applies now, shared
/// with whoever decides when it changes. A server starts each connection
/// at ``WireProtocol/helloFrameBytes`` and raises it to its
/// `max_frame_bytes` once the hello is accepted, so that a peer that has
/// not identified itself can make the server hold only a small frame.
public final class FrameLimit: Sendable {
    private let bytes: Atomic<Int>

    /// A limit of `bytes` bytes.
    public init(_ bytes: Int) {
        self.bytes = Atomic(bytes)
    }

    /// The limit now.
    public var current: Int { bytes.load(ordering: .acquiring) }

    /// Changes the limit for the frames decoded from now on.
    public func set(_ newValue: Int) {
        bytes.store(newValue, ordering: .releasing)
    }
}
