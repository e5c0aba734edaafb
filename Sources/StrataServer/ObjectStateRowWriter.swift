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
/// The entries are written into memory of the writer's own
/// (``RowWriterMemory``) with plain stores, and appended to the batch in
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

    private var batch: ByteBuffer
    /// What the batch held before the first row.
    private let batchBytes: Int
    private let limit: Int
    private let memory: RowWriterMemory
    /// The written bytes: `memory`'s, cached here so that writes do not
    /// go through the class (whose properties are checked for exclusive
    /// access on every read).
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    private var count = 0
    /// Where the current row's entry starts.
    private var rowStart = 0
    /// A decimal's text, made once for its size and its bytes.
    private var decimals: [String] = []

    /// A writer appending to `batch`, which it will not make hold more
    /// than `limit` bytes.
    init(batch: ByteBuffer, limit: Int, allocator: ByteBufferAllocator) {
        self.batch = batch
        self.batchBytes = batch.readableBytes
        self.limit = limit
        memory = RowWriterMemory(capacity: 4096)
        base = memory.base
        capacity = memory.capacity
    }

    /// The batch with the entries written, the writer gone: moved out,
    /// not copied, so that the batch stays uniquely referenced.
    consuming func takeBatch() -> ByteBuffer {
        batch.writeBytes(UnsafeRawBufferPointer(start: base, count: count))
        return batch
    }

    mutating func beginRow(storeIdentifier: String, entityName: String, key: Int64, version: Int64) throws {
        rowStart = count
        let id = ObjectID(storeIdentifier: storeIdentifier, entityName: entityName, key: .permanent(key))
        let size = ObjectStateEncoding.headerSize(id, version: version)
        reserve(Self.entryPrefix + size)
        count += Self.entryPrefix
        var writer = ProtobufWriter(UnsafeMutableRawBufferPointer(start: base + count, count: size))
        writer.stateHeader(id, version: version)
        count += writer.offset
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
        let bodyStart = rowStart + Self.entryPrefix
        let size = count - bodyStart
        let prefix = 1 + ByteBuffer.protobufVarintSize(UInt64(size))
        let end = rowStart + prefix + size
        guard end <= limit - batchBytes else {
            throw ResponseWriter.tooLarge(batchBytes + end, maxFrameBytes: limit, atLeast: true)
        }
        var writer = ProtobufWriter(UnsafeMutableRawBufferPointer(start: base + rowStart, count: prefix))
        writer.tag(1, Self.delimitedType)
        writer.varint(UInt64(size))
        if prefix < Self.entryPrefix {
            (base + rowStart + prefix).copyMemory(from: base + bodyStart, byteCount: size)
        }
        count = end
    }

    /// Room for `bytes` more.
    @inline(__always)
    private mutating func reserve(_ bytes: Int) {
        guard capacity - count < bytes else { return }
        memory.grow(toHold: count + bytes, keeping: count)
        base = memory.base
        capacity = memory.capacity
    }

    /// Writes an `ObjectState.values` entry (field 4) whose `Value` body,
    /// `valueSize` bytes, `body` writes.
    @inline(__always)
    private mutating func writeEntry(_ name: String, valueSize: Int, body: (inout ProtobufWriter) -> Void) {
        let entrySize = ProtobufWriter.delimitedSize(name.utf8.count) + ProtobufWriter.delimitedSize(valueSize)
        let bytes = 1 + ProtobufWriter.varintSize(UInt64(entrySize)) + entrySize
        reserve(bytes)
        var writer = ProtobufWriter(UnsafeMutableRawBufferPointer(start: base + count, count: bytes))
        writer.tag(4, Self.delimitedType)
        writer.varint(UInt64(entrySize))
        writer.string(1, name)                                       // the entry's key
        writer.tag(2, Self.delimitedType)                            // the entry's value
        writer.varint(UInt64(valueSize))
        body(&writer)
        count += writer.offset
    }
}

/// The memory an ``ObjectStateRowWriter`` writes into, freed with it.
final class RowWriterMemory {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int

    init(capacity: Int) {
        base = .allocate(byteCount: capacity, alignment: 1)
        self.capacity = capacity
    }

    /// Replaces the memory with at least `bytes` (at least twice as
    /// much as now), its first `kept` bytes copied over.
    func grow(toHold bytes: Int, keeping kept: Int) {
        let grown = max(bytes, 2 * capacity)
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 1)
        fresh.copyMemory(from: base, byteCount: kept)
        base.deallocate()
        base = fresh
        capacity = grown
    }

    deinit {
        base.deallocate()
    }
}
