import NIOCore
import StrataWire
import SwiftProtobuf

/// Writes one connection's server frames. Many request tasks write through
/// it at once (NIO's async writer takes concurrent producers and suspends
/// them while the socket is not writable, which is the server's
/// backpressure on clients that do not read).
final class ResponseWriter: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<Frame>
    /// The connection's state, shared with its event-loop handler.
    let state: ConnectionState

    private let maxFrameBytes: Int

    init(outbound: NIOAsyncChannelOutboundWriter<Frame>, maxFrameBytes: Int, state: ConnectionState = ConnectionState()) {
        self.outbound = outbound
        self.maxFrameBytes = maxFrameBytes
        self.state = state
    }

    /// Compress large frames from now on (the client accepted it in hello).
    func enableCompression() {
        state.enableCompression()
    }

    /// Sends one frame.
    func send(_ frame: Strata_V1_ServerFrame) async throws {
        try await outbound.write(Self.frame(frame, compresses: state.compresses, maxFrameBytes: maxFrameBytes))
    }

    /// `message` as a wire frame, to be compressed when agreed and large;
    /// an answer past the frame limit is refused (RESOURCE_EXHAUSTED). Every
    /// answer is made here, on the async side or the event loop.
    static func frame(_ message: Strata_V1_ServerFrame, compresses: Bool, maxFrameBytes: Int) throws -> Frame {
        let bytes: [UInt8] = try message.serializedBytes()
        guard bytes.count <= maxFrameBytes else {
            throw WireError(.resourceExhausted, "the answer is \(bytes.count) bytes, more than the frame limit of \(maxFrameBytes) bytes (for a fetch: ask for fewer objects per batch with batch_size, or fewer fetched properties and relationships)")
        }
        return Frame(payload: ByteBuffer(bytes: bytes), compressed: compresses && bytes.count >= WireProtocol.compressionThreshold)
    }

    /// Sends a response body.
    func send(requestID: UInt64, more: Bool = false, _ body: Strata_V1_ServerFrame.OneOf_Response) async throws {
        var frame = Strata_V1_ServerFrame()
        frame.requestID = requestID
        frame.moreFollows = more
        frame.response = body
        try await send(frame)
    }

    /// Sends a failure: the last frame of its request.
    func send(requestID: UInt64, status: Strata_V1_Status) async throws {
        var frame = Strata_V1_ServerFrame()
        frame.requestID = requestID
        frame.status = status
        try await send(frame)
    }
}
