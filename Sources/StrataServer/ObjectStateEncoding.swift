import Foundation
import NIOCore
import StrataModel
import StrataStore
import StrataWire

/// Stored rows written straight into the protobuf bytes of an
/// `ObjectState` (and of the `FetchBatch` around them), as
/// ``ServerCore/state(of:)`` would encode them, without building a message
/// with a map of `Value` messages per row first: building and sizing those
/// maps was the largest cost of answering a query or a get.
///
/// The bytes decode to the same message as `ServerCore.state(of:)`'s
/// (`ObjectStateEncodingTests` checks every kind of value); only the order
/// of the map's entries may differ, which protobuf leaves open. Field
/// numbers are `Protocol/strata.proto`'s.
enum ObjectStateEncoding {
    private static let varintType = ProtobufWriter.varintType, delimitedType = ProtobufWriter.delimitedType

    /// Writes the `ObjectState` of `snapshot` (its non-nil values) as a
    /// message body, with no length in front: sized first, then written
    /// into the buffer's memory in one pass.
    static func writeState(of snapshot: Snapshot, into buffer: inout ByteBuffer) {
        // Decimals' texts, made once for the size and the bytes.
        var decimals: [String] = []
        let size = stateSize(of: snapshot, decimals: &decimals)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { memory in
            var writer = ProtobufWriter(memory)
            writer.state(of: snapshot, decimals: decimals)
            return writer.offset
        }
    }

    /// Writes `FetchBatch.objects` entries (field 1), one per snapshot.
    /// Refuses (RESOURCE_EXHAUSTED, as an answer past the frame limit is)
    /// to make `buffer` hold more than `limit` bytes: each row is sized
    /// before it is written, so a batch too large for any frame is never
    /// built.
    static func writeStates(of snapshots: some Sequence<Snapshot>, into buffer: inout ByteBuffer, limit: Int) throws(WireError) {
        var decimals: [String] = []
        for snapshot in snapshots {
            decimals.removeAll(keepingCapacity: true)
            let size = stateSize(of: snapshot, decimals: &decimals)
            let total = 1 + ByteBuffer.protobufVarintSize(UInt64(size)) + size
            guard total <= limit - buffer.readableBytes else {
                throw ResponseWriter.tooLarge(buffer.readableBytes + total, maxFrameBytes: limit, atLeast: true)
            }
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: total) { memory in
                var writer = ProtobufWriter(memory)
                writer.tag(1, delimitedType)
                writer.varint(UInt64(size))
                writer.state(of: snapshot, decimals: decimals)
                return writer.offset
            }
        }
    }

    /// Writes a `FetchBatch.count` (field 3); nothing for 0, as protobuf
    /// leaves a proto3 zero out.
    static func writeCount(_ count: UInt64, into buffer: inout ByteBuffer) {
        guard count != 0 else { return }
        buffer.writeInteger(UInt8(3 << 3 | varintType))
        buffer.writeProtobufVarint(count)
    }

    // MARK: Sizes

    /// The size of an `ObjectState`'s body; appends the text of each
    /// decimal value to `decimals`, in the order the values come.
    private static func stateSize(of snapshot: Snapshot, decimals: inout [String]) -> Int {
        var size = headerSize(snapshot.objectID, version: snapshot.version)
        for (name, value) in snapshot.values where !value.isNull {
            size += ProtobufWriter.delimitedSize(entrySize(name: name, value: value, decimals: &decimals))
        }
        return size
    }

    /// The size of an `ObjectState`'s fields before its values: its ID,
    /// entity and version.
    static func headerSize(_ id: ObjectID, version: Int64) -> Int {
        headerSize(idSize: ProtobufWriter.idSize(id), entityName: id.entityName.utf8.count, version: version)
    }

    /// ``headerSize(_:version:)`` from the lengths of the ID's text and of
    /// the entity's name.
    static func headerSize(idSize: Int, entityName: Int, version: Int64) -> Int {
        ProtobufWriter.delimitedSize(idSize)
            + (entityName == 0 ? 0 : ProtobufWriter.delimitedSize(entityName))
            + (version == 0 ? 0 : 1 + ProtobufWriter.varintSize(UInt64(bitPattern: version)))
    }

    /// The size of a `map<string, Value>` entry's body: the key (field 1)
    /// and the value (field 2).
    private static func entrySize(name: String, value: PropertyValue, decimals: inout [String]) -> Int {
        ProtobufWriter.delimitedSize(name.utf8.count) + ProtobufWriter.delimitedSize(valueSize(value, decimals: &decimals))
    }

    /// The size of a `Value` message's body.
    static func valueSize(_ value: PropertyValue, decimals: inout [String]) -> Int {
        switch value {
        case .null: return 0
        case .integer(let v): return 1 + ProtobufWriter.varintSize(zigzag(v))
        case .double, .date: return 9
        case .decimal(let decimal):
            let text = decimal.wireText
            decimals.append(text)
            return ProtobufWriter.delimitedSize(text.utf8.count)
        case .string(let text), .uri(let text): return ProtobufWriter.delimitedSize(text.utf8.count)
        case .boolean: return 2
        case .binary(let data): return ProtobufWriter.delimitedSize(data.count)
        case .uuid: return ProtobufWriter.delimitedSize(16)
        case .object(let id): return ProtobufWriter.delimitedSize(ProtobufWriter.idSize(id))
        case .objects(let ids): return ProtobufWriter.delimitedSize(listSize(ids))
        }
    }

    /// The size of an `ObjectIDList`'s body.
    fileprivate static func listSize(_ ids: [ObjectID]) -> Int {
        ids.reduce(0) { $0 + ProtobufWriter.delimitedSize(ProtobufWriter.idSize($1)) }
    }

    /// A sint64's zigzag form.
    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }
}

/// The `ObjectState` writes of ``ObjectStateEncoding``.
extension ProtobufWriter {
    /// An `ObjectState` message body; `decimals` as sized.
    mutating func state(of snapshot: Snapshot, decimals: [String]) {
        stateHeader(snapshot.objectID, version: snapshot.version)
        var decimalIndex = 0
        for (name, value) in snapshot.values where !value.isNull {      // ObjectState.values
            var unused: [String] = []
            let decimalText: String? = if case .decimal = value { decimals[decimalIndex] } else { nil }
            if decimalText != nil { decimalIndex += 1 }
            let valueBytes = decimalText.map { Self.delimitedSize($0.utf8.count) } ?? ObjectStateEncoding.valueSize(value, decimals: &unused)
            tag(4, Self.delimitedType)
            varint(UInt64(Self.delimitedSize(name.utf8.count) + Self.delimitedSize(valueBytes)))
            string(1, name)                                              // the entry's key
            tag(2, Self.delimitedType)                                       // the entry's value
            varint(UInt64(valueBytes))
            self.value(value, decimalText: decimalText)
        }
    }

    /// An `ObjectState`'s fields before its values
    /// (``ObjectStateEncoding/headerSize(_:version:)`` bytes).
    mutating func stateHeader(_ id: ObjectID, version: Int64) {
        self.id(1, id)                                                   // ObjectState.id
        if !id.entityName.isEmpty {                                      // ObjectState.entity
            string(2, id.entityName)
        }
        stateVersion(version)
    }

    /// ``stateHeader(_:version:)`` for a permanent ID given by the UTF-8
    /// bytes of its store's identifier and its entity's name.
    mutating func stateHeader(storeIdentifier: UnsafeRawBufferPointer, entityName: UnsafeRawBufferPointer, key: Int64, version: Int64) {
        permanentID(1, storeIdentifier: storeIdentifier, entityName: entityName, key: key)   // ObjectState.id
        if !entityName.isEmpty {                                         // ObjectState.entity
            tag(2, Self.delimitedType)
            varint(UInt64(entityName.count))
            raw(entityName)
        }
        stateVersion(version)
    }

    /// ObjectState.version (proto3: 0 is absent).
    private mutating func stateVersion(_ version: Int64) {
        if version != 0 {
            tag(3, Self.varintType)
            varint(UInt64(bitPattern: version))
        }
    }

    /// A `Value` message's body: the one field of its `kind`.
    mutating func value(_ value: PropertyValue, decimalText: String?) {
        switch value {
        case .null:
            break
        case .integer(let v):
            tag(1, Self.varintType)
            varint(ObjectStateEncoding.zigzag(v))
        case .double(let v):
            tag(2, Self.fixed64Type)
            fixed64(v.bitPattern)
        case .decimal:
            string(3, decimalText ?? "")
        case .string(let text):
            string(4, text)
        case .boolean(let v):
            tag(5, Self.varintType)
            byte(v ? 1 : 0)
        case .date(let date):
            tag(6, Self.fixed64Type)
            fixed64(date.timeIntervalSinceReferenceDate.bitPattern)
        case .binary(let data):
            tag(7, Self.delimitedType)
            varint(UInt64(data.count))
            data.withUnsafeBytes { raw($0) }
        case .uuid(let uuid):
            tag(8, Self.delimitedType)
            byte(16)
            withUnsafeBytes(of: uuid.uuid) { raw($0) }
        case .uri(let text):
            string(9, text)
        case .object(let id):
            self.id(10, id)
        case .objects(let ids):
            tag(11, Self.delimitedType)
            varint(UInt64(ObjectStateEncoding.listSize(ids)))
            for id in ids { self.id(1, id) }
        }
    }
}
