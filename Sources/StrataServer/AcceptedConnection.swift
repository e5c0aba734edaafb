import NIOCore
import StrataWire

/// An accepted connection: its async channel and the state its
/// ``EventLoopRequestHandler`` shares with the async side.
struct AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<Frame, ByteBuffer>
    let state: ConnectionState
}
