import NIOCore
import StrataModel

/// Protobuf bytes written into memory sized beforehand (with the size
/// functions below, which mirror the writes): no capacity growth per
/// write. Every write still checks its bounds: a size that disagreed with
/// the bytes would be a bug here, never a write past the memory. Used by
/// the answers written without building messages first
/// (``ObjectStateEncoding``, ``SaveAnswerEncoding``).
struct ProtobufWriter {
    /// Wire types.
    static let varintType: UInt8 = 0, fixed64Type: UInt8 = 1, delimitedType: UInt8 = 2

    let memory: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ memory: UnsafeMutableRawBufferPointer) {
        self.memory = memory
    }

    mutating func byte(_ value: UInt8) {
        precondition(offset < memory.count, "ProtobufWriter: a message's size was computed short")
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
        precondition(offset + 8 <= memory.count, "ProtobufWriter: a message's size was computed short")
        memory.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
        offset += 8
    }

    mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, let start = memory.baseAddress, !bytes.isEmpty else { return }
        precondition(offset + bytes.count <= memory.count, "ProtobufWriter: a message's size was computed short")
        (start + offset).copyMemory(from: base, byteCount: bytes.count)
        offset += bytes.count
    }

    mutating func text(_ text: String) {
        // Read in place: `withUTF8` is mutating, so it needs a copy of the
        // string (a retain and a release per call, twice per value of
        // every row of a fetch).
        let written: Void? = text.utf8.withContiguousStorageIfAvailable { raw(UnsafeRawBufferPointer($0)) }
        guard written == nil else { return }
        var copy = text
        copy.withUTF8 { raw(UnsafeRawBufferPointer($0)) }
    }

    /// A length-delimited string field.
    mutating func string(_ field: UInt8, _ value: String) {
        tag(field, Self.delimitedType)
        varint(UInt64(value.utf8.count))
        text(value)
    }

    /// An ID's text as a string field, written in pieces (no string is
    /// made for it).
    mutating func id(_ field: UInt8, _ id: ObjectID) {
        tag(field, Self.delimitedType)
        varint(UInt64(Self.idSize(id)))
        guard case .permanent(let key) = id.key else {
            text(id.uriRepresentation)
            return
        }
        text("strata://")
        text(id.storeIdentifier)
        byte(UInt8(ascii: "/"))
        text(id.entityName)
        keySuffix(key)
    }

    /// A permanent ID's text as a string field, from the UTF-8 bytes of
    /// its store's identifier and its entity's name
    /// (``permanentIDSize(storeIdentifier:entityName:key:)`` bytes of text).
    mutating func permanentID(_ field: UInt8, storeIdentifier: UnsafeRawBufferPointer, entityName: UnsafeRawBufferPointer, key: Int64) {
        tag(field, Self.delimitedType)
        varint(UInt64(Self.permanentIDSize(storeIdentifier: storeIdentifier.count, entityName: entityName.count, key: key)))
        text("strata://")
        raw(storeIdentifier)
        byte(UInt8(ascii: "/"))
        raw(entityName)
        keySuffix(key)
    }

    /// `/p<key>`, the end of a permanent ID's text.
    private mutating func keySuffix(_ key: Int64) {
        byte(UInt8(ascii: "/"))
        byte(UInt8(ascii: "p"))
        if key < 0 { byte(UInt8(ascii: "-")) }
        let digits = Self.decimalDigits(key) - (key < 0 ? 1 : 0)
        precondition(offset + digits <= memory.count, "ProtobufWriter: a message's size was computed short")
        var magnitude = key.magnitude
        for position in stride(from: offset + digits - 1, through: offset, by: -1) {
            memory[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        }
        offset += digits
    }

    // MARK: Sizes

    /// The length of an ID's text (``ObjectID/uriRepresentation``).
    static func idSize(_ id: ObjectID) -> Int {
        switch id.key {
        case .permanent(let key):
            return permanentIDSize(storeIdentifier: id.storeIdentifier.utf8.count, entityName: id.entityName.utf8.count, key: key)
        case .temporary:
            return id.uriRepresentation.utf8.count
        }
    }

    /// The length of a permanent ID's text, from the UTF-8 lengths of its
    /// store's identifier and its entity's name.
    static func permanentIDSize(storeIdentifier: Int, entityName: Int, key: Int64) -> Int {
        // strata://<store>/<Entity>/p<key>
        9 + storeIdentifier + 1 + entityName + 2 + decimalDigits(key)
    }

    /// How many characters an integer takes in decimal (with its sign).
    static func decimalDigits(_ value: Int64) -> Int {
        var magnitude = value.magnitude
        var count = value < 0 ? 2 : 1
        while magnitude >= 10 {
            magnitude /= 10
            count += 1
        }
        return count
    }

    /// The size of a length-delimited field (one-byte tag) of `count` bytes.
    static func delimitedSize(_ count: Int) -> Int {
        1 + varintSize(UInt64(count)) + count
    }

    static func varintSize(_ value: UInt64) -> Int {
        ByteBuffer.protobufVarintSize(value)
    }
}
