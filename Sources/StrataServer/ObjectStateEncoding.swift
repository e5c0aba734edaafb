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
    /// Wire types.
    private static let varintType: UInt8 = 0, fixed64Type: UInt8 = 1, delimitedType: UInt8 = 2

    /// Writes the `ObjectState` of `snapshot` (its non-nil values) as a
    /// message body, with no length in front: sized first, then written
    /// into the buffer's memory in one pass.
    static func writeState(of snapshot: Snapshot, into buffer: inout ByteBuffer) {
        // Decimals' texts, made once for the size and the bytes.
        var decimals: [String] = []
        let size = stateSize(of: snapshot, decimals: &decimals)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { memory in
            var writer = Writer(memory)
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
                var writer = Writer(memory)
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
        var size = delimitedSize(idSize(snapshot.objectID))
            + (snapshot.objectID.entityName.isEmpty ? 0 : delimitedSize(snapshot.objectID.entityName.utf8.count))
            + (snapshot.version == 0 ? 0 : 1 + varintSize(UInt64(bitPattern: snapshot.version)))
        for (name, value) in snapshot.values where !value.isNull {
            size += delimitedSize(entrySize(name: name, value: value, decimals: &decimals))
        }
        return size
    }

    /// The size of a `map<string, Value>` entry's body: the key (field 1)
    /// and the value (field 2).
    private static func entrySize(name: String, value: PropertyValue, decimals: inout [String]) -> Int {
        delimitedSize(name.utf8.count) + delimitedSize(valueSize(value, decimals: &decimals))
    }

    /// The size of a `Value` message's body.
    private static func valueSize(_ value: PropertyValue, decimals: inout [String]) -> Int {
        switch value {
        case .null: return 0
        case .integer(let v): return 1 + varintSize(zigzag(v))
        case .double, .date: return 9
        case .decimal(let decimal):
            let text = decimal.wireText
            decimals.append(text)
            return delimitedSize(text.utf8.count)
        case .string(let text), .uri(let text): return delimitedSize(text.utf8.count)
        case .boolean: return 2
        case .binary(let data): return delimitedSize(data.count)
        case .uuid: return delimitedSize(16)
        case .object(let id): return delimitedSize(idSize(id))
        case .objects(let ids): return delimitedSize(listSize(ids))
        }
    }

    /// The size of an `ObjectIDList`'s body.
    private static func listSize(_ ids: [ObjectID]) -> Int {
        ids.reduce(0) { $0 + delimitedSize(idSize($1)) }
    }

    /// The length of an ID's text (``ObjectID/uriRepresentation``).
    private static func idSize(_ id: ObjectID) -> Int {
        switch id.key {
        case .permanent(let key):
            // strata://<store>/<Entity>/p<key>
            return 9 + id.storeIdentifier.utf8.count + 1 + id.entityName.utf8.count + 2 + decimalDigits(key)
        case .temporary:
            return id.uriRepresentation.utf8.count
        }
    }

    /// How many characters an integer takes in decimal (with its sign).
    private static func decimalDigits(_ value: Int64) -> Int {
        var magnitude = value.magnitude
        var count = value < 0 ? 2 : 1
        while magnitude >= 10 {
            magnitude /= 10
            count += 1
        }
        return count
    }

    private static func delimitedSize(_ count: Int) -> Int {
        1 + varintSize(UInt64(count)) + count
    }

    private static func varintSize(_ value: UInt64) -> Int {
        ByteBuffer.protobufVarintSize(value)
    }

    /// A sint64's zigzag form.
    fileprivate static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    // MARK: Writing

    /// Writes into memory sized beforehand (by the functions above, which
    /// mirror these): no capacity growth per write. Every write still
    /// checks its bounds (a size that disagreed with the bytes would be a
    /// bug here, never a write past the memory).
    private struct Writer {
        let memory: UnsafeMutableRawBufferPointer
        var offset = 0

        init(_ memory: UnsafeMutableRawBufferPointer) {
            self.memory = memory
        }

        mutating func byte(_ value: UInt8) {
            precondition(offset < memory.count, "ObjectStateEncoding: a row's size was computed short")
            memory[offset] = value
            offset += 1
        }

        mutating func tag(_ field: UInt8, _ wireType: UInt8) {
            byte(field << 3 | wireType)
        }

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                byte(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            byte(UInt8(value))
        }

        mutating func fixed64(_ value: UInt64) {
            precondition(offset + 8 <= memory.count, "ObjectStateEncoding: a row's size was computed short")
            memory.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }

        mutating func raw(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, let start = memory.baseAddress, !bytes.isEmpty else { return }
            precondition(offset + bytes.count <= memory.count, "ObjectStateEncoding: a row's size was computed short")
            (start + offset).copyMemory(from: base, byteCount: bytes.count)
            offset += bytes.count
        }

        mutating func text(_ text: String) {
            var text = text
            text.withUTF8 { raw(UnsafeRawBufferPointer($0)) }
        }

        /// A length-delimited string field.
        mutating func string(_ field: UInt8, _ value: String) {
            tag(field, delimitedType)
            varint(UInt64(value.utf8.count))
            text(value)
        }

        /// An ID's text, written in pieces (no string is made for it).
        mutating func id(_ field: UInt8, _ id: ObjectID) {
            tag(field, delimitedType)
            varint(UInt64(idSize(id)))
            guard case .permanent(let key) = id.key else {
                text(id.uriRepresentation)
                return
            }
            text("strata://")
            text(id.storeIdentifier)
            byte(UInt8(ascii: "/"))
            text(id.entityName)
            byte(UInt8(ascii: "/"))
            byte(UInt8(ascii: "p"))
            if key < 0 { byte(UInt8(ascii: "-")) }
            let digits = decimalDigits(key) - (key < 0 ? 1 : 0)
            precondition(offset + digits <= memory.count, "ObjectStateEncoding: a row's size was computed short")
            var magnitude = key.magnitude
            for position in stride(from: offset + digits - 1, through: offset, by: -1) {
                memory[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            offset += digits
        }

        mutating func state(of snapshot: Snapshot, decimals: [String]) {
            id(1, snapshot.objectID)                                         // ObjectState.id
            if !snapshot.objectID.entityName.isEmpty {                       // ObjectState.entity
                string(2, snapshot.objectID.entityName)
            }
            if snapshot.version != 0 {                                       // ObjectState.version (proto3: 0 is absent)
                tag(3, varintType)
                varint(UInt64(bitPattern: snapshot.version))
            }
            var decimalIndex = 0
            for (name, value) in snapshot.values where !value.isNull {      // ObjectState.values
                var unused: [String] = []
                let decimalText: String? = if case .decimal = value { decimals[decimalIndex] } else { nil }
                if decimalText != nil { decimalIndex += 1 }
                let valueBytes = decimalText.map { delimitedSize($0.utf8.count) } ?? valueSize(value, decimals: &unused)
                tag(4, delimitedType)
                varint(UInt64(delimitedSize(name.utf8.count) + delimitedSize(valueBytes)))
                string(1, name)                                              // the entry's key
                tag(2, delimitedType)                                            // the entry's value
                varint(UInt64(valueBytes))
                self.value(value, decimalText: decimalText)
            }
        }

        /// A `Value` message's body: the one field of its `kind`.
        mutating func value(_ value: PropertyValue, decimalText: String?) {
            switch value {
            case .null:
                break
            case .integer(let v):
                tag(1, varintType)
                varint(zigzag(v))
            case .double(let v):
                tag(2, fixed64Type)
                fixed64(v.bitPattern)
            case .decimal:
                string(3, decimalText ?? "")
            case .string(let text):
                string(4, text)
            case .boolean(let v):
                tag(5, varintType)
                byte(v ? 1 : 0)
            case .date(let date):
                tag(6, fixed64Type)
                fixed64(date.timeIntervalSinceReferenceDate.bitPattern)
            case .binary(let data):
                tag(7, delimitedType)
                varint(UInt64(data.count))
                data.withUnsafeBytes { raw($0) }
            case .uuid(let uuid):
                tag(8, delimitedType)
                byte(16)
                withUnsafeBytes(of: uuid.uuid) { raw($0) }
            case .uri(let text):
                string(9, text)
            case .object(let id):
                self.id(10, id)
            case .objects(let ids):
                tag(11, delimitedType)
                varint(UInt64(listSize(ids)))
                for id in ids { self.id(1, id) }
            }
        }
    }
}
