import NIOCore
import StrataWire
import SwiftProtobuf

/// Writes one connection's server frames. Many request tasks write through
/// it at once (NIO's async writer takes concurrent producers and suspends
/// them while the socket is not writable, which is the server's
/// backpressure on clients that do not read). Each frame is written with
/// its header (``FrameEncoder/write(_:into:)``), as the event loop's
/// handlers write theirs, so the pipeline needs no encoder that every
/// read, write and flush would pass through.
final class ResponseWriter: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    /// The connection's state, shared with its event-loop handler.
    let state: ConnectionState

    private let maxFrameBytes: Int

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, maxFrameBytes: Int, state: ConnectionState = ConnectionState()) {
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
        try await outbound.write(Self.framed(frame, compresses: state.compresses, maxFrameBytes: maxFrameBytes))
    }

    /// `answer` as one whole wire frame, header included
    /// (``frame(_:compresses:maxFrameBytes:)``, then written as
    /// ``FrameEncoder/write(_:into:)`` writes it).
    static func framed(_ answer: Strata_V1_ServerFrame, compresses: Bool, maxFrameBytes: Int) throws -> ByteBuffer {
        let bytes: [UInt8] = try answer.serializedBytes()
        if bytes.count <= maxFrameBytes, !(compresses && bytes.count >= WireProtocol.compressionThreshold) {
            // The common small answer: header and payload written once,
            // as the frame encoder writes them (flag 0, big-endian length).
            var buffer = ByteBufferAllocator().buffer(capacity: bytes.count + WireProtocol.headerSize)
            buffer.writeInteger(UInt8(0))
            buffer.writeInteger(UInt32(bytes.count))
            buffer.writeBytes(bytes)
            return buffer
        }
        return encoded(try frame(bytes: bytes, compresses: compresses, maxFrameBytes: maxFrameBytes))
    }

    /// `frame` with its header, compressed if it says so.
    static func encoded(_ frame: Frame) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: frame.payload.readableBytes + WireProtocol.headerSize)
        FrameEncoder.write(frame, into: &buffer)
        return buffer
    }

    /// `message` as a wire frame, to be compressed when agreed and large;
    /// an answer past the frame limit is refused (RESOURCE_EXHAUSTED). Every
    /// answer is made here, on the async side or the event loop.
    static func frame(_ message: Strata_V1_ServerFrame, compresses: Bool, maxFrameBytes: Int) throws -> Frame {
        try frame(bytes: message.serializedBytes(), compresses: compresses, maxFrameBytes: maxFrameBytes)
    }

    /// ``frame(_:compresses:maxFrameBytes:)`` of a message already encoded.
    static func frame(bytes: [UInt8], compresses: Bool, maxFrameBytes: Int) throws -> Frame {
        guard bytes.count <= maxFrameBytes else {
            throw tooLarge(bytes.count, maxFrameBytes: maxFrameBytes)
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

    /// Sends one batch of a fetch's answer: `batch` is a `FetchBatch`
    /// message's bytes, framed here as `ServerFrame.fetch` (field 13) with
    /// the request ID (field 1) and `more_follows` (field 3) before it.
    func send(requestID: UInt64, more: Bool, fetchBatch batch: ByteBuffer) async throws {
        let payload = try Self.fetchBatchPayload(requestID: requestID, more: more, batch: batch, maxFrameBytes: maxFrameBytes)
        try await outbound.write(Self.encoded(Frame(payload: payload, compressed: state.compresses && payload.readableBytes >= WireProtocol.compressionThreshold)))
    }

    /// The `ServerFrame` bytes of one batch of a fetch's answer (see
    /// ``send(requestID:more:fetchBatch:)``); RESOURCE_EXHAUSTED past
    /// `maxFrameBytes`.
    static func fetchBatchPayload(requestID: UInt64, more: Bool, batch: ByteBuffer, maxFrameBytes: Int) throws(WireError) -> ByteBuffer {
        let payloadBytes = (requestID != 0 ? 1 + ByteBuffer.protobufVarintSize(requestID) : 0) + (more ? 2 : 0)
            + 1 + ByteBuffer.protobufVarintSize(UInt64(batch.readableBytes)) + batch.readableBytes
        guard payloadBytes <= maxFrameBytes else {
            throw tooLarge(payloadBytes, maxFrameBytes: maxFrameBytes)
        }
        var payload = ByteBufferAllocator().buffer(capacity: payloadBytes)
        if requestID != 0 {
            payload.writeInteger(UInt8(0x08))       // ServerFrame.request_id: field 1, varint
            payload.writeProtobufVarint(requestID)
        }
        if more {
            payload.writeInteger(UInt8(0x18))       // ServerFrame.more_follows: field 3, varint
            payload.writeInteger(UInt8(1))
        }
        payload.writeInteger(UInt8(0x6A))           // ServerFrame.fetch: field 13, length-delimited
        payload.writeProtobufVarint(UInt64(batch.readableBytes))
        payload.writeImmutableBuffer(batch)
        return payload
    }

    /// Bytes to leave free before a fetch batch's first byte for
    /// ``frameFetchBatch(requestID:batch:maxFrameBytes:)``: the frame's
    /// header and the payload's fields before the batch, at their largest.
    static let fetchBatchHeadroom = WireProtocol.headerSize + (1 + 10) + (1 + 5)

    /// Makes `batch` (a `FetchBatch` message's bytes, the last batch of
    /// its answer, with at least ``fetchBatchHeadroom`` bytes before its
    /// reader index) the whole uncompressed frame
    /// ``fetchBatchPayload(requestID:more:batch:maxFrameBytes:)`` frames,
    /// written in place: its header and the payload's first fields go in
    /// the bytes before the batch, so no buffer is made or copied.
    /// RESOURCE_EXHAUSTED past `maxFrameBytes`.
    static func frameFetchBatch(requestID: UInt64, batch: inout ByteBuffer, maxFrameBytes: Int) throws(WireError) {
        let batchBytes = batch.readableBytes
        let payloadBytes = (requestID != 0 ? 1 + ByteBuffer.protobufVarintSize(requestID) : 0)
            + 1 + ByteBuffer.protobufVarintSize(UInt64(batchBytes)) + batchBytes
        guard payloadBytes <= maxFrameBytes else {
            throw tooLarge(payloadBytes, maxFrameBytes: maxFrameBytes)
        }
        let prefix = WireProtocol.headerSize + payloadBytes - batchBytes
        guard prefix <= batch.readerIndex else {
            throw WireError(.internal, "an answer was framed without room for its header")
        }
        let start = batch.readerIndex - prefix
        var at = start
        at += batch.setInteger(UInt8(0), at: at)                        // not compressed
        at += batch.setInteger(UInt32(clamping: payloadBytes), at: at)
        if requestID != 0 {
            at += batch.setInteger(UInt8(0x08), at: at)                 // ServerFrame.request_id
            at += batch.setProtobufVarint(requestID, at: at)
        }
        at += batch.setInteger(UInt8(0x6A), at: at)                     // ServerFrame.fetch
        at += batch.setProtobufVarint(UInt64(batchBytes), at: at)
        batch.moveReaderIndex(to: start)
    }

    /// The refusal of an answer past the frame limit; `atLeast` when the
    /// answer was refused before it was whole.
    static func tooLarge(_ bytes: Int, maxFrameBytes: Int, atLeast: Bool = false) -> WireError {
        WireError(.resourceExhausted, "the answer is \(atLeast ? "at least " : "")\(bytes) bytes, more than the frame limit of \(maxFrameBytes) bytes (for a fetch: ask for fewer objects per batch with batch_size, or fewer fetched properties and relationships)")
    }

    /// Sends a failure: the last frame of its request.
    func send(requestID: UInt64, status: Strata_V1_Status) async throws {
        var frame = Strata_V1_ServerFrame()
        frame.requestID = requestID
        frame.status = status
        try await send(frame)
    }
}
