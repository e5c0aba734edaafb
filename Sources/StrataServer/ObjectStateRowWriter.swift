import Foundation
import NIOCore
import StrataModel
import StrataStore
import StrataWire

/// Writes `FetchBatch.objects` entries (field 1) from rows as a store
/// reads them (``StoredRowVisitor``): the bytes
/// ``ObjectStateEncoding/writeStates(of:into:limit:)`` writes for the same
/// rows' snapshots, with no snapshot made and no value but decimals and
/// non-ASCII text made into an object on the way.
///
/// Each row's `ObjectState` is written to a scratch buffer (its length
/// comes before it) and then after the entries already in ``batch``;
/// a row that would make ``batch`` hold more than the limit throws
/// RESOURCE_EXHAUSTED, as ``ObjectStateEncoding/writeStates(of:into:limit:)``
/// refuses it.
struct ObjectStateRowWriter: StoredRowVisitor {
    private static let delimitedType = ProtobufWriter.delimitedType

    /// The entries written so far.
    private(set) var batch: ByteBuffer
    /// The current row's `ObjectState` body.
    private var row: ByteBuffer
    private let limit: Int
    /// A decimal's text, made once for its size and its bytes.
    private var decimals: [String] = []

    /// A writer appending to `batch`, which it will not make hold more
    /// than `limit` bytes.
    init(batch: ByteBuffer, limit: Int, allocator: ByteBufferAllocator) {
        self.batch = batch
        self.limit = limit
        row = allocator.buffer(capacity: 512)
    }

    /// The entries written, the writer gone: moved out, not copied, so
    /// that the batch stays uniquely referenced.
    consuming func takeBatch() -> ByteBuffer {
        batch
    }

    mutating func beginRow(storeIdentifier: String, entityName: String, key: Int64, version: Int64) throws {
        row.clear()
        let id = ObjectID(storeIdentifier: storeIdentifier, entityName: entityName, key: .permanent(key))
        row.writeWithUnsafeMutableBytes(minimumWritableBytes: ObjectStateEncoding.headerSize(id, version: version)) { memory in
            var writer = ProtobufWriter(memory)
            writer.stateHeader(id, version: version)
            return writer.offset
        }
    }

    mutating func value(_ name: String, _ value: StoredValue) throws {
        switch value {
        case .text(let bytes):
            // Value.string (field 4).
            let valueSize = ProtobufWriter.delimitedSize(bytes.count)
            writeEntry(name, valueSize: valueSize) { writer in
                writer.tag(4, Self.delimitedType)
                writer.varint(UInt64(bytes.count))
                writer.raw(bytes)
            }
        case .value(let property):
            decimals.removeAll(keepingCapacity: true)
            let valueSize = ObjectStateEncoding.valueSize(property, decimals: &decimals)
            let decimalText = decimals.first
            writeEntry(name, valueSize: valueSize) { writer in
                writer.value(property, decimalText: decimalText)
            }
        }
    }

    mutating func endRow() throws {
        let size = row.readableBytes
        let total = 1 + ByteBuffer.protobufVarintSize(UInt64(size)) + size
        guard total <= limit - batch.readableBytes else {
            throw ResponseWriter.tooLarge(batch.readableBytes + total, maxFrameBytes: limit, atLeast: true)
        }
        batch.writeInteger(UInt8(1 << 3) | Self.delimitedType)
        batch.writeProtobufVarint(UInt64(size))
        batch.writeBuffer(&row)
    }

    /// Writes an `ObjectState.values` entry (field 4) whose `Value` body,
    /// `valueSize` bytes, `body` writes.
    private mutating func writeEntry(_ name: String, valueSize: Int, body: (inout ProtobufWriter) -> Void) {
        let entrySize = ProtobufWriter.delimitedSize(name.utf8.count) + ProtobufWriter.delimitedSize(valueSize)
        row.writeWithUnsafeMutableBytes(minimumWritableBytes: 1 + ProtobufWriter.varintSize(UInt64(entrySize)) + entrySize) { memory in
            var writer = ProtobufWriter(memory)
            writer.tag(4, Self.delimitedType)
            writer.varint(UInt64(entrySize))
            writer.string(1, name)                                       // the entry's key
            writer.tag(2, Self.delimitedType)                            // the entry's value
            writer.varint(UInt64(valueSize))
            body(&writer)
            return writer.offset
        }
    }
}
