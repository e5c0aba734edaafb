import NIOCore
import StrataWire
import Testing
@testable import StrataServer

/// A fetch batch framed in place (``ResponseWriter/frameFetchBatch(requestID:batch:maxFrameBytes:)``)
/// is byte for byte the frame the frame encoder writes for the payload
/// ``ResponseWriter/fetchBatchPayload(requestID:more:batch:maxFrameBytes:)``
/// makes, whatever the sizes of the request ID and the batch.
@Suite struct ResponseWriterFramingTests {
    /// Request IDs whose varints take 1, 2, 5 and 10 bytes (0: none).
    private static let requestIDs: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, 1 << 35, .max]
    /// Batch sizes around the varint lengths of their length.
    private static let batchSizes = [0, 1, 127, 128, 16_383, 16_384, 70_000]

    @Test("Framed in place as the encoder frames the payload", arguments: requestIDs)
    func framedAsTheEncoderFrames(_ requestID: UInt64) throws {
        let allocator = ByteBufferAllocator()
        for size in Self.batchSizes {
            var batch = allocator.buffer(capacity: ResponseWriter.fetchBatchHeadroom + size)
            batch.moveWriterIndex(forwardBy: ResponseWriter.fetchBatchHeadroom)
            batch.moveReaderIndex(forwardBy: ResponseWriter.fetchBatchHeadroom)
            batch.writeBytes((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let payload = try ResponseWriter.fetchBatchPayload(requestID: requestID, more: false, batch: batch, maxFrameBytes: 1 << 20)
            var expected = allocator.buffer(capacity: 0)
            FrameEncoder.write(Frame(payload: payload), into: &expected)
            try ResponseWriter.frameFetchBatch(requestID: requestID, batch: &batch, maxFrameBytes: 1 << 20)
            #expect(batch == expected, "request \(requestID), \(size) bytes")
        }
    }

    @Test("A batch past the frame limit is refused, and one without room for its header")
    func refusals() throws {
        let allocator = ByteBufferAllocator()
        var batch = allocator.buffer(capacity: 64)
        batch.moveWriterIndex(forwardBy: ResponseWriter.fetchBatchHeadroom)
        batch.moveReaderIndex(forwardBy: ResponseWriter.fetchBatchHeadroom)
        batch.writeBytes([UInt8](repeating: 7, count: 30))
        var tooLarge = batch
        #expect(throws: WireError.self) { try ResponseWriter.frameFetchBatch(requestID: 1, batch: &tooLarge, maxFrameBytes: 31) }
        var noRoom = allocator.buffer(capacity: 8)
        noRoom.writeBytes([1, 2, 3])
        let error = try #require(throws: WireError.self) { try ResponseWriter.frameFetchBatch(requestID: 1, batch: &noRoom, maxFrameBytes: 1 << 20) }
        #expect(error.code == .internal)
        // The batch that fits is framed.
        try ResponseWriter.frameFetchBatch(requestID: 1, batch: &batch, maxFrameBytes: 1 << 20)
        #expect(batch.readableBytes == WireProtocol.headerSize + 2 + 2 + 30)
    }
}
