import Foundation
import NIOCore
import StrataModel
import StrataStore
import StrataWire

/// Writes `FetchBatch.objects` entries (field 1) from rows as a store
/// reads them (``StoredRowVisitor``): the bytes
/// ``ObjectStateEncoding/writeStates(of:into:limit:)`` writes for the same
/// rows' snapshots, with no snapshot made and no value but non-ASCII text
/// (and decimals whose text is long) made into an object on the way.
///
/// The entries are written into memory of the writer's own with plain
/// stores, and appended to the batch in
/// one copy by ``takeBatch()``: a `ByteBuffer` write checks uniqueness
/// and capacity and goes through closures, once per value of every row.
/// Each row's entry leaves room for the longest length prefix before
/// its `ObjectState`, and moves the state up to its real prefix once its
/// size is known. A row that would make the batch hold more than the limit
/// throws RESOURCE_EXHAUSTED, as
/// ``ObjectStateEncoding/writeStates(of:into:limit:)`` refuses it.
struct ObjectStateRowWriter: StoredRowVisitor {
    private static let delimitedType = ProtobufWriter.delimitedType
    /// An entry's tag and the longest length prefix a row may need
    /// (a varint of a size below 2³⁵ bytes, far past any frame limit).
    private static let entryPrefix = 1 + 5

    /// Nil once taken (``takeBatch()``).
    private var batch: ByteBuffer?
    /// What the batch held before the first row.
    private let batchBytes: Int
    private let limit: Int
    /// The entries written so far: the first ``count`` bytes (one
    /// allocation, the object and its bytes together).
    private var memory: ManagedBuffer<Void, UInt8>
    private var capacity: Int
    private var count = 0
    /// Where the current row's entry starts.
    private var rowStart = 0
    /// A decimal's text, made once for its size and its bytes.
    private var decimals: [String] = []

    /// A writer appending to `batch`, which it will not make hold more
    /// than `limit` bytes.
    init(batch: ByteBuffer, limit: Int) {
        self.batchBytes = batch.readableBytes
        self.batch = batch
        self.limit = limit
        // As much as the batch has room for: what its maker expects the
        // rows to take.
        memory = ManagedBuffer<Void, UInt8>.create(minimumCapacity: max(256, batch.writableBytes)) { _ in () }
        capacity = memory.capacity
    }

    /// The batch with the entries written, moved out of the writer
    /// before they are appended, so that it is uniquely referenced and
    /// not copied (empty when taken before).
    mutating func takeBatch() -> ByteBuffer {
        guard var taken = batch.take() else { return ByteBuffer() }
        let written = count
        _ = memory.withUnsafeMutablePointerToElements { taken.writeBytes(UnsafeRawBufferPointer(start: $0, count: written)) }
        return taken
    }

    mutating func beginRow(storeIdentifier: UnsafeRawBufferPointer, entityName: UnsafeRawBufferPointer, key: Int64, version: Int64) throws {
        rowStart = count
        let idSize = ProtobufWriter.permanentIDSize(storeIdentifier: storeIdentifier.count, entityName: entityName.count, key: key)
        let size = ObjectStateEncoding.headerSize(idSize: idSize, entityName: entityName.count, version: version)
        // Room for the prefix's gap and the header together, so that the
        // gap is never past the memory (``count`` never passes ``capacity``).
        reserve(Self.entryPrefix + size)
        count += Self.entryPrefix
        write(size) { writer in writer.stateHeader(storeIdentifier: storeIdentifier, entityName: entityName, key: key, version: version) }
    }

    mutating func value(_ name: UnsafeRawBufferPointer, _ value: StoredValue) throws {
        switch value {
        case .text(let bytes):
            // Value.string (field 4).
            let valueSize = ProtobufWriter.delimitedSize(bytes.count)
            writeEntry(name, valueSize: valueSize) { writer in
                writer.tag(4, Self.delimitedType)
                writer.varint(UInt64(bytes.count))
                writer.raw(bytes)
            }
        case .decimalText(let bytes):
            // Value.decimal (field 3).
            writeEntry(name, valueSize: ProtobufWriter.delimitedSize(bytes.count)) { writer in
                writer.tag(3, Self.delimitedType)
                writer.varint(UInt64(bytes.count))
                writer.raw(bytes)
            }
        case .value(let property):
            // Only a decimal makes text; the list is left alone otherwise
            // (emptying it retains and releases its storage).
            var decimalText: String?
            let valueSize: Int
            if case .decimal = property {
                decimals.removeAll(keepingCapacity: true)
                valueSize = ObjectStateEncoding.valueSize(property, decimals: &decimals)
                decimalText = decimals.first
            } else {
                // Appends nothing for any other value.
                valueSize = ObjectStateEncoding.valueSize(property, decimals: &decimals)
            }
            writeEntry(name, valueSize: valueSize) { writer in
                writer.value(property, decimalText: decimalText)
            }
        }
    }

    mutating func endRow() throws {
        let (rowStart, bodyStart) = (rowStart, rowStart + Self.entryPrefix)
        let size = count - bodyStart
        let prefix = 1 + ByteBuffer.protobufVarintSize(UInt64(size))
        let end = rowStart + prefix + size
        guard end <= limit - batchBytes else {
            throw ResponseWriter.tooLarge(batchBytes + end, maxFrameBytes: limit, atLeast: true)
        }
        memory.withUnsafeMutablePointerToElements { elements in
            var writer = ProtobufWriter(UnsafeMutableRawBufferPointer(start: elements + rowStart, count: prefix))
            writer.tag(1, Self.delimitedType)
            writer.varint(UInt64(size))
            if prefix < Self.entryPrefix {
                // Overlapping: copyMemory moves (memmove).
                UnsafeMutableRawPointer(elements + rowStart + prefix).copyMemory(from: elements + bodyStart, byteCount: size)
            }
        }
        count = end
    }

    /// Writes `bytes` (exactly) with `body` after those written so far.
    @inline(__always)
    private mutating func write(_ bytes: Int, _ body: (inout ProtobufWriter) -> Void) {
        reserve(bytes)
        let start = count
        count += memory.withUnsafeMutablePointerToElements { elements in
            var writer = ProtobufWriter(UnsafeMutableRawBufferPointer(start: elements + start, count: bytes))
            body(&writer)
            return writer.offset
        }
    }

    /// Room for `bytes` more after the ``count`` written.
    @inline(__always)
    private mutating func reserve(_ bytes: Int) {
        if capacity - count < bytes { grow(toHold: count + bytes) }
    }

    /// Replaces ``memory`` with at least `bytes` (at least twice as much
    /// as now), the bytes written so far copied over.
    private mutating func grow(toHold bytes: Int) {
        let grown = ManagedBuffer<Void, UInt8>.create(minimumCapacity: max(bytes, 2 * capacity)) { _ in () }
        let written = count
        memory.withUnsafeMutablePointerToElements { old in
            grown.withUnsafeMutablePointerToElements { new in UnsafeMutableRawPointer(new).copyMemory(from: old, byteCount: written) }
        }
        memory = grown
        capacity = grown.capacity
    }

    /// Writes an `ObjectState.values` entry (field 4) whose `Value` body,
    /// `valueSize` bytes, `body` writes.
    @inline(__always)
    private mutating func writeEntry(_ name: UnsafeRawBufferPointer, valueSize: Int, body: (inout ProtobufWriter) -> Void) {
        let entrySize = ProtobufWriter.delimitedSize(name.count) + ProtobufWriter.delimitedSize(valueSize)
        write(1 + ProtobufWriter.varintSize(UInt64(entrySize)) + entrySize) { writer in
            writer.tag(4, Self.delimitedType)
            writer.varint(UInt64(entrySize))
            writer.tag(1, Self.delimitedType)                            // the entry's key
            writer.varint(UInt64(name.count))
            writer.raw(name)
            writer.tag(2, Self.delimitedType)                            // the entry's value
            writer.varint(UInt64(valueSize))
            body(&writer)
        }
    }
}
