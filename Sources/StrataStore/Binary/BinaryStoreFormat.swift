import Foundation
import StrataModel
import StrataQuery

/// The binary store's file format, version 1.
///
/// ```
/// header (32 bytes)
///   0  magic "STRATAB1"
///   8  format version, UInt32 LE (1)
///  12  flags, UInt32 LE (0)
///  16  payload length, UInt64 LE
///  24  CRC-32 of the payload, UInt32 LE
///  28  CRC-32 of header bytes 0..<28, UInt32 LE
/// payload (from byte 32)
///   store UUID (16 bytes), model name
///   entities: count, then each: name, version hash, parent?, abstract,
///     version hash modifier?, attributes (name, type, optional, modifier?),
///     relationships (name, destination, inverse?, to-many, ordered,
///     optional, modifier?)
///   tables: count, then each: root entity, last primary key, value column
///     names, order column names, rows: count, then each: primary key,
///     entity (index into entities), version, values (column, typed value),
///     order keys (column, position)
///   link tables: count, then each: entity, relationship, forward ordered,
///     reverse ordered, forward lists (source, destinations), and when the
///     reverse is ordered the reverse lists (destination, sources)
/// ```
/// Integers are zigzag LEB128 varints, counts and lengths LEB128 varints,
/// strings length-prefixed UTF-8. A typed value is a tag byte then its
/// payload (see ``Tag``). Rows, columns and lists are written in key order,
/// so equal stores give equal files.
package enum BinaryStoreFormat {
    /// The file's first eight bytes.
    package static let magic: [UInt8] = Array("STRATAB1".utf8)
    /// The format version this build writes and reads.
    static let version: UInt32 = 1
    /// The header's size.
    static let headerSize = 32

    /// Value tags.
    enum Tag: UInt8 {
        case null = 0, integer, double, decimal, string, falseValue, trueValue, date, binary, uuid, uri, object
    }

    // MARK: - Encoding

    /// The file bytes of a store.
    static func encode(_ storage: MemoryStorage, schema: StoredSchema, modelName: String) -> [UInt8] {
        var payload = ByteWriter()
        // The identifier is always a UUID string: made by UUID() or read
        // from these 16 bytes.
        let uuid = UUID(uuidString: storage.identifier) ?? UUID()
        payload.raw(withUnsafeBytes(of: uuid.uuid) { Array($0) })
        payload.string(modelName)

        var entityIndex: [String: Int] = [:]
        payload.count(schema.entities.count)
        for (index, entity) in schema.entities.enumerated() {
            entityIndex[entity.name] = index
            encode(entity, into: &payload)
        }

        let roots = storage.tables.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        payload.count(roots.count)
        for root in roots {
            encode(storage.tables[root] ?? RowTable(), root: root, entityIndex: entityIndex, into: &payload)
        }

        let slots = storage.links.keys.sorted()
        payload.count(slots.count)
        for slot in slots {
            guard let table = storage.links[slot] else { continue }
            payload.string(slot.entity)
            payload.string(slot.name)
            payload.flag(table.forwardOrdered)
            payload.flag(table.reverseOrdered)
            encode(table.forward, into: &payload)
            if table.reverseOrdered { encode(table.reverse, into: &payload) }
        }

        return file(payload: payload.bytes)
    }

    /// A whole file: the header (with both checksums) and `payload`.
    static func file(payload: [UInt8]) -> [UInt8] {
        var file = ByteWriter()
        file.raw(magic)
        file.uint32(version)
        file.uint32(0)
        file.uint64(UInt64(payload.count))
        file.uint32(CRC32.checksum(payload))
        file.uint32(CRC32.checksum(file.bytes))
        file.raw(payload)
        return file.bytes
    }

    private static func encode(_ entity: StoredSchema.Entity, into writer: inout ByteWriter) {
        writer.string(entity.name)
        writer.data(entity.versionHash)
        writer.optionalString(entity.parent)
        writer.flag(entity.isAbstract)
        writer.optionalString(entity.versionHashModifier)
        writer.count(entity.attributes.count)
        for attribute in entity.attributes {
            writer.string(attribute.name)
            writer.string(attribute.type)
            writer.flag(attribute.isOptional)
            writer.optionalString(attribute.versionHashModifier)
        }
        writer.count(entity.relationships.count)
        for relationship in entity.relationships {
            writer.string(relationship.name)
            writer.string(relationship.destination)
            writer.optionalString(relationship.inverse)
            writer.flag(relationship.isToMany)
            writer.flag(relationship.isOrdered)
            writer.flag(relationship.isOptional)
            writer.optionalString(relationship.versionHashModifier)
        }
    }

    private static func encode(_ table: RowTable, root: String, entityIndex: [String: Int], into writer: inout ByteWriter) {
        writer.string(root)
        writer.signed(table.lastPrimaryKey)
        let keys = table.rows.keys.sorted()
        var columnNames: Set<String> = []
        var orderNames: Set<String> = []
        for row in table.rows.values {
            columnNames.formUnion(row.values.keys)
            orderNames.formUnion(row.orderKeys.keys)
        }
        let columns = columnNames.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let orders = orderNames.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let columnIndex = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, $0) })
        let orderIndex = Dictionary(uniqueKeysWithValues: orders.enumerated().map { ($1, $0) })
        writer.count(columns.count)
        for name in columns { writer.string(name) }
        writer.count(orders.count)
        for name in orders { writer.string(name) }

        writer.count(keys.count)
        for key in keys {
            guard let row = table.rows[key] else { continue }
            writer.signed(key)
            writer.count(entityIndex[row.entityName] ?? 0)
            writer.signed(row.version)
            let values = row.values.map { (column: columnIndex[$0.key] ?? 0, value: $0.value) }.sorted { $0.column < $1.column }
            writer.count(values.count)
            for (column, value) in values {
                writer.count(column)
                encode(value, entityIndex: entityIndex, into: &writer)
            }
            let orderKeys = row.orderKeys.map { (column: orderIndex[$0.key] ?? 0, position: $0.value) }.sorted { $0.column < $1.column }
            writer.count(orderKeys.count)
            for (column, position) in orderKeys {
                writer.count(column)
                writer.signed(position)
            }
        }
    }

    private static func encode(_ lists: [Int64: [Int64]], into writer: inout ByteWriter) {
        writer.count(lists.count)
        for key in lists.keys.sorted() {
            let list = lists[key] ?? []
            writer.signed(key)
            writer.count(list.count)
            for member in list { writer.signed(member) }
        }
    }

    private static func encode(_ value: PropertyValue, entityIndex: [String: Int], into writer: inout ByteWriter) {
        switch value {
        case .null, .objects:
            writer.byte(Tag.null.rawValue)
        case .integer(let v):
            writer.byte(Tag.integer.rawValue)
            writer.signed(v)
        case .double(let d):
            writer.byte(Tag.double.rawValue)
            writer.double(d)
        case .decimal(let d):
            if let key = DecimalKey.encode(d) {
                writer.byte(Tag.decimal.rawValue)
                writer.string(key)
            } else {
                writer.byte(Tag.null.rawValue)
            }
        case .string(let s):
            writer.byte(Tag.string.rawValue)
            writer.string(s)
        case .boolean(let b):
            writer.byte(b ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
        case .date(let date):
            writer.byte(Tag.date.rawValue)
            writer.double(date.timeIntervalSinceReferenceDate)
        case .binary(let data):
            writer.byte(Tag.binary.rawValue)
            writer.data(data)
        case .uuid(let uuid):
            writer.byte(Tag.uuid.rawValue)
            writer.raw(withUnsafeBytes(of: uuid.uuid) { Array($0) })
        case .uri(let s):
            writer.byte(Tag.uri.rawValue)
            writer.string(s)
        case .object(let id):
            writer.byte(Tag.object.rawValue)
            writer.count(entityIndex[id.entityName] ?? 0)
            writer.signed(id.primaryKey ?? 0)
        }
    }
}
