import NIOCore
import StrataStore
import StrataWire
import SwiftProtobuf

/// Encoded rows for gets answered on the event loop: a row's `ObjectState`
/// bytes, kept as the row cache entry's attachment (so they go whenever the
/// snapshot does), spliced into an answer frame assembled around them
/// instead of building and encoding each row's value map again (the
/// largest user-space cost of a get).
enum RowEncoding {
    /// Rows whose encoding is larger are encoded each time, not attached
    /// (the row cache is bounded by count; this bounds it by bytes too).
    static let maximumAttachedBytes = 4096

    /// The encoding of a row as an `ObjectState`, as the async side answers it.
    static func encodedState(of snapshot: Snapshot) -> [UInt8] {
        var buffer = ByteBufferAllocator().buffer(capacity: 256)
        ObjectStateEncoding.writeState(of: snapshot, into: &buffer)
        return Array(buffer.readableBytesView)
    }

    /// The wire frame (flag byte, 4-byte length, payload; uncompressed) of
    /// a `ServerFrame` answering request `requestID` with a `RefreshResponse`
    /// whose `objects` are the given encoded `ObjectState`s, in order (field
    /// numbers from `Protocol/strata.proto`: `ServerFrame.request_id` 1,
    /// `ServerFrame.refresh` 15, `RefreshResponse.objects` 1). Sized first
    /// and written once into one buffer, header included: no intermediate
    /// arrays and no second copy.
    static func refreshAnswerFrame(requestID: UInt64, states: some Collection<[UInt8]>, allocator: ByteBufferAllocator) -> ByteBuffer {
        var spare: ByteBuffer?
        return refreshAnswerFrame(requestID: requestID, states: states, allocator: allocator, reusing: &spare)
    }

    /// ``refreshAnswerFrame(requestID:states:allocator:)`` written into
    /// `spare` when there is one (taken): an earlier answer's buffer,
    /// whose storage is written over in place once nothing else holds it
    /// (the channel let go of it once it was written), so that a
    /// connection's answers need no allocation each.
    static func refreshAnswerFrame(requestID: UInt64, states: some Collection<[UInt8]>, allocator: ByteBufferAllocator, reusing spare: inout ByteBuffer?) -> ByteBuffer {
        var responseBytes = 0
        for state in states { responseBytes += 1 + ByteBuffer.protobufVarintSize(UInt64(state.count)) + state.count }
        let payloadBytes = (requestID != 0 ? 1 + ByteBuffer.protobufVarintSize(requestID) : 0) + 1 + ByteBuffer.protobufVarintSize(UInt64(responseBytes)) + responseBytes
        var buffer: ByteBuffer
        if var reused = spare.take() {
            // A new storage only when the old one is still shared or too small.
            reused.clear(minimumCapacity: WireProtocol.headerSize + payloadBytes)
            buffer = reused
        } else {
            buffer = allocator.buffer(capacity: WireProtocol.headerSize + payloadBytes)
        }
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(UInt32(truncatingIfNeeded: payloadBytes))
        if requestID != 0 {
            buffer.writeInteger(UInt8(0x08))    // ServerFrame.request_id: field 1, varint
            buffer.writeProtobufVarint(requestID)
        }
        buffer.writeInteger(UInt8(0x7A))        // ServerFrame.refresh: field 15, length-delimited
        buffer.writeProtobufVarint(UInt64(responseBytes))
        for state in states {
            buffer.writeInteger(UInt8(0x0A))    // RefreshResponse.objects: field 1, length-delimited
            buffer.writeProtobufVarint(UInt64(state.count))
            buffer.writeBytes(state)
        }
        return buffer
    }
}
