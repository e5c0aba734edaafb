import Foundation
import StrataModel
import StrataQuery

/// Reads a binary store file in two steps: the header and schema first
/// (so the store can compare them with its model before anything else),
/// then the rows and links, checked against both the file's schema and the
/// model's layout and migrated on the way (removed properties dropped,
/// added attributes given their defaults).
///
/// Every failure is a ``BinaryCorruption`` naming the byte offset.
struct BinaryStoreDecoder {
    private var reader: ByteReader
    /// The store's UUID string.
    private(set) var identifier = ""
    /// The name of the model that wrote the file.
    private(set) var modelName = ""
    /// The schema that wrote the file.
    private(set) var schema = StoredSchema(entities: [])

    /// Checks the header (magic, version, length, checksums) of `bytes`.
    init(_ bytes: [UInt8]) throws(BinaryCorruption) {
        let format = BinaryStoreFormat.self
        guard bytes.count >= format.headerSize else {
            if bytes.count >= format.magic.count, Array(bytes[0..<format.magic.count]) != format.magic {
                throw BinaryCorruption(offset: 0, reason: "not a Strata binary store (bad magic bytes)")
            }
            throw BinaryCorruption(offset: bytes.count, reason: "truncated header: \(bytes.count) of \(format.headerSize) bytes")
        }
        var header = ByteReader(bytes, end: format.headerSize)
        guard try header.raw(format.magic.count, "magic bytes") == format.magic else {
            throw BinaryCorruption(offset: 0, reason: "not a Strata binary store (bad magic bytes)")
        }
        let version = try header.uint32("format version")
        _ = try header.uint32("flags")
        let length = try header.uint64("payload length")
        let payloadChecksum = try header.uint32("payload checksum")
        let headerChecksum = try header.uint32("header checksum")
        let computedHeader = CRC32.checksum(bytes, range: 0..<28)
        guard headerChecksum == computedHeader else {
            throw BinaryCorruption(offset: 28, reason: "header checksum mismatch (stored \(Self.hex(headerChecksum)), computed \(Self.hex(computedHeader)))")
        }
        guard version == format.version else {
            throw BinaryCorruption(offset: 8, reason: "unsupported format version \(version) (this build reads version \(format.version))")
        }
        let available = UInt64(bytes.count - format.headerSize)
        guard length <= available else {
            throw BinaryCorruption(offset: bytes.count, reason: "truncated: the header announces \(length) payload bytes, the file holds \(available)")
        }
        guard length == available else {
            throw BinaryCorruption(offset: format.headerSize + Int(length), reason: "\(available - length) unexpected bytes after the payload")
        }
        let computed = CRC32.checksum(bytes, range: format.headerSize..<bytes.count)
        guard computed == payloadChecksum else {
            throw BinaryCorruption(offset: format.headerSize, reason: "payload checksum mismatch over bytes \(format.headerSize)..<\(bytes.count) (stored \(Self.hex(payloadChecksum)), computed \(Self.hex(computed)))")
        }
        reader = ByteReader(bytes, start: format.headerSize)
    }

    private static func hex(_ value: UInt32) -> String {
        "0x" + String(value, radix: 16, uppercase: true)
    }

    // MARK: - Step 1: identity and schema

    /// Reads the store UUID, model name and schema.
    mutating func readSchema() throws(BinaryCorruption) {
        let uuidStart = reader.offset
        let raw = try reader.raw(16, "store UUID")
        let uuid = UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                               raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
        guard raw.contains(where: { $0 != 0 }) else {
            throw reader.corruption("the store UUID is all zeros", at: uuidStart)
        }
        identifier = uuid.uuidString
        modelName = try reader.string("model name")
        let count = try reader.count("entity count")
        var entities: [StoredSchema.Entity] = []
        var names: Set<String> = []
        for _ in 0..<count {
            let start = reader.offset
            let entity = try readEntity()
            guard names.insert(entity.name).inserted else {
                throw reader.corruption("entity '\(entity.name)' is listed twice", at: start)
            }
            entities.append(entity)
        }
        schema = StoredSchema(entities: entities)
    }

    private mutating func readEntity() throws(BinaryCorruption) -> StoredSchema.Entity {
        let name = try reader.string("entity name")
        let hash = Array(try reader.data("version hash of \(name)"))
        let parent = try reader.optionalString("parent of \(name)")
        let isAbstract = try reader.flag("abstract flag of \(name)")
        let modifier = try reader.optionalString("version hash modifier of \(name)")
        var attributes: [StoredSchema.Attribute] = []
        for _ in 0..<(try reader.count("attribute count of \(name)")) {
            let start = reader.offset
            let attribute = StoredSchema.Attribute(
                name: try reader.string("attribute name"),
                type: try reader.string("attribute type"),
                isOptional: try reader.flag("optional flag"),
                versionHashModifier: try reader.optionalString("version hash modifier")
            )
            guard AttributeType(rawValue: attribute.type) != nil else {
                throw reader.corruption("attribute \(name).\(attribute.name) has unknown type '\(attribute.type)'", at: start)
            }
            attributes.append(attribute)
        }
        var relationships: [StoredSchema.Relationship] = []
        for _ in 0..<(try reader.count("relationship count of \(name)")) {
            relationships.append(StoredSchema.Relationship(
                name: try reader.string("relationship name"),
                destination: try reader.string("relationship destination"),
                inverse: try reader.optionalString("inverse name"),
                isToMany: try reader.flag("to-many flag"),
                isOrdered: try reader.flag("ordered flag"),
                isOptional: try reader.flag("optional flag"),
                versionHashModifier: try reader.optionalString("version hash modifier")
            ))
        }
        return StoredSchema.Entity(name: name, versionHash: hash, parent: parent, isAbstract: isAbstract, versionHashModifier: modifier, attributes: attributes, relationships: relationships)
    }

    // MARK: - Step 2: rows and links

    /// Reads the rows and link tables into a storage laid out by `layout`
    /// (the model's), dropping what the model no longer has and giving rows
    /// the `defaults` of attributes their entity gained (entity →
    /// attribute → value). Call after ``readSchema()``.
    mutating func readStorage(layout: MemoryLayout, defaults: [String: [String: PropertyValue]]) throws(BinaryCorruption) -> MemoryStorage {
        var tables: [String: RowTable] = [:]
        let tableCount = try reader.count("table count")
        for _ in 0..<tableCount {
            let start = reader.offset
            let (root, table) = try readTable(layout: layout, defaults: defaults)
            guard tables[root] == nil else { throw reader.corruption("the rows of '\(root)' are stored twice", at: start) }
            tables[root] = table
        }
        var links: [StorageSlot: LinkTable] = [:]
        let linkCount = try reader.count("link table count")
        for _ in 0..<linkCount {
            let start = reader.offset
            let slot = StorageSlot(entity: try reader.string("link table entity"), name: try reader.string("link table relationship"))
            let forwardOrdered = try reader.flag("forward ordered flag")
            let reverseOrdered = try reader.flag("reverse ordered flag")
            let forward = try readLists("links of \(slot)")
            let reverse = reverseOrdered ? try readLists("inverse links of \(slot)") : nil
            guard links[slot] == nil else { throw reader.corruption("link table \(slot) is stored twice", at: start) }
            guard let spec = layout.links[slot], spec.forwardOrdered == forwardOrdered, spec.reverseOrdered == reverseOrdered else {
                if schema.entity(named: slot.entity)?.relationships.contains(where: { $0.name == slot.name && $0.isToMany }) == true,
                   model(layout).relationship(named: slot.name, in: slot.entity) == nil {
                    continue // the relationship was removed from the model
                }
                throw reader.corruption("link table \(slot) does not match the store's relationships", at: start)
            }
            for (source, destinations) in forward {
                guard tables[spec.sourceRoot]?.rows[source] != nil else {
                    throw reader.corruption("link table \(slot) names missing source row \(source)", at: start)
                }
                for destination in destinations where tables[spec.destinationRoot]?.rows[destination] == nil {
                    throw reader.corruption("link table \(slot) names missing destination row \(destination)", at: start)
                }
            }
            guard let table = LinkTable(forwardOrdered: forwardOrdered, reverseOrdered: reverseOrdered, forward: forward, reverse: reverse) else {
                throw reader.corruption("link table \(slot) holds duplicate, unsorted or mismatched links", at: start)
            }
            links[slot] = table
        }
        guard reader.isAtEnd else {
            throw reader.corruption("\(reader.remaining) unexpected bytes after the last link table")
        }
        return MemoryStorage(identifier: identifier, layout: layout, tables: tables, links: links)
    }

    private func model(_ layout: MemoryLayout) -> ObjectModel { layout.model }

    private mutating func readLists(_ what: String) throws(BinaryCorruption) -> [Int64: [Int64]] {
        var lists: [Int64: [Int64]] = [:]
        for _ in 0..<(try reader.count("list count of \(what)", minimumSize: 2)) {
            let start = reader.offset
            let key = try reader.signed("key in \(what)")
            var list: [Int64] = []
            for _ in 0..<(try reader.count("length of a list in \(what)")) { list.append(try reader.signed("member of \(what)")) }
            guard lists[key] == nil, !list.isEmpty else {
                throw reader.corruption("\(what): the list of \(key) is empty or stored twice", at: start)
            }
            lists[key] = list
        }
        return lists
    }

    private mutating func readTable(layout: MemoryLayout, defaults: [String: [String: PropertyValue]]) throws(BinaryCorruption) -> (String, RowTable) {
        let start = reader.offset
        let root = try reader.string("table root entity")
        guard layout.roots.contains(root) else {
            throw reader.corruption("rows stored for '\(root)', which is not an entity hierarchy of the store", at: start)
        }
        let lastStart = reader.offset
        let lastPrimaryKey = try reader.signed("last primary key of \(root)")
        guard lastPrimaryKey >= 0 else { throw reader.corruption("last primary key of \(root) is negative", at: lastStart) }
        var columns: [String] = []
        for _ in 0..<(try reader.count("column count of \(root)")) { columns.append(try reader.string("column name")) }
        var orderColumns: [String] = []
        for _ in 0..<(try reader.count("order column count of \(root)")) { orderColumns.append(try reader.string("order column name")) }

        var table = RowTable(lastPrimaryKey: lastPrimaryKey)
        let rowCount = try reader.count("row count of \(root)", minimumSize: 5)
        table.rows.reserveCapacity(rowCount)
        for _ in 0..<rowCount {
            let rowStart = reader.offset
            let key = try reader.signed("primary key")
            guard key >= 1, key <= lastPrimaryKey else {
                throw reader.corruption("primary key \(key) of \(root) is outside 1...\(lastPrimaryKey)", at: rowStart)
            }
            guard table.rows[key] == nil else { throw reader.corruption("primary key \(key) of \(root) is stored twice", at: rowStart) }
            let entityStart = reader.offset
            let entityNumber = try reader.count("entity of \(root) p\(key)")
            guard entityNumber < schema.entities.count else {
                throw reader.corruption("entity number \(entityNumber) of \(root) p\(key) is out of range", at: entityStart)
            }
            let entity = schema.entities[entityNumber].name
            guard layout.entityNames.contains(entity), layout.model.rootEntityName(of: entity) == root else {
                throw reader.corruption("row p\(key) of \(root) is a '\(entity)', which is not in that hierarchy", at: entityStart)
            }
            let versionStart = reader.offset
            let version = try reader.signed("version of \(entity) p\(key)")
            guard version >= 1 else { throw reader.corruption("version \(version) of \(entity) p\(key) is below 1", at: versionStart) }
            var row = StoredRow(entityName: entity, version: version)
            for _ in 0..<(try reader.count("value count of \(entity) p\(key)", minimumSize: 2)) {
                let valueStart = reader.offset
                let column = try reader.count("column of a value of \(entity) p\(key)")
                guard column < columns.count else {
                    throw reader.corruption("column \(column) of \(entity) p\(key) is out of range", at: valueStart)
                }
                let name = columns[column]
                let value = try readValue("\(entity).\(name) of p\(key)")
                guard row.values[name] == nil else { throw reader.corruption("\(entity).\(name) of p\(key) is stored twice", at: valueStart) }
                if let kept = try check(value, name: name, entity: entity, layout: layout, at: valueStart) {
                    row.values[name] = kept
                }
            }
            for _ in 0..<(try reader.count("order key count of \(entity) p\(key)", minimumSize: 2)) {
                let orderStart = reader.offset
                let column = try reader.count("order column of \(entity) p\(key)")
                guard column < orderColumns.count else {
                    throw reader.corruption("order column \(column) of \(entity) p\(key) is out of range", at: orderStart)
                }
                let name = orderColumns[column]
                let position = try reader.signed("order key \(entity).\(name) of p\(key)")
                if let slot = layout.indexedToOnes[entity]?[name], layout.childIndexes[slot]?.ordered == true {
                    row.orderKeys[name] = position
                } else if !wasStored(name, relationshipOf: entity) {
                    throw reader.corruption("order key '\(name)' of \(entity) p\(key) names no ordered relationship", at: orderStart)
                }
            }
            for (name, value) in defaults[entity] ?? [:] where row.values[name] == nil {
                if let attribute = layout.attribute(name, of: entity),
                   let stored = try? AttributeValueCoercion.coerce(value, to: attribute, entity: entity), !stored.isNull {
                    row.values[name] = stored
                }
            }
            table.rows[key] = row
        }
        return (root, table)
    }

    /// The value to keep for a stored column: checked against the model
    /// (nil when the property was removed from the model).
    private func check(_ value: PropertyValue, name: String, entity: String, layout: MemoryLayout, at offset: Int) throws(BinaryCorruption) -> PropertyValue? {
        if let attribute = layout.attribute(name, of: entity) {
            guard AttributeValueCoercion.isStoredForm(value, of: attribute.type) else {
                throw BinaryCorruption(offset: offset, reason: "\(entity).\(name) holds \(AttributeValueCoercion.kind(of: value)) \(value), which does not fit \(attribute.type.xcodeName)")
            }
            return value.isNull ? nil : value
        }
        if let relationship = layout.relationship(name, of: entity), !relationship.description.isToMany {
            guard case .object(let id) = value else {
                throw BinaryCorruption(offset: offset, reason: "\(entity).\(name) holds \(AttributeValueCoercion.kind(of: value)) \(value), not an object")
            }
            guard relationship.storage == .toOne else { return nil }
            guard layout.isHeld(id.entityName, kindOf: relationship.description.destinationEntityName) else {
                throw BinaryCorruption(offset: offset, reason: "\(entity).\(name) points to a '\(id.entityName)', not a '\(relationship.description.destinationEntityName)'")
            }
            return value
        }
        if schema.entity(named: entity)?.attributes.contains(where: { $0.name == name }) == true || wasStored(name, relationshipOf: entity) {
            return nil // removed from the model: dropped
        }
        throw BinaryCorruption(offset: offset, reason: "'\(entity)' has no persisted property '\(name)'")
    }

    private func wasStored(_ name: String, relationshipOf entity: String) -> Bool {
        schema.entity(named: entity)?.relationships.contains { $0.name == name } ?? false
    }

    private mutating func readValue(_ what: String) throws(BinaryCorruption) -> PropertyValue {
        let start = reader.offset
        let raw = try reader.byte("type tag of \(what)")
        guard let tag = BinaryStoreFormat.Tag(rawValue: raw) else {
            throw reader.corruption("unknown type tag \(raw) for \(what)", at: start)
        }
        switch tag {
        case .null: return .null
        case .integer: return .integer(try reader.signed(what))
        case .double: return .double(try reader.double(what))
        case .decimal:
            let keyStart = reader.offset
            let key = try reader.string(what)
            guard let decimal = DecimalKey.decode(key) else {
                throw reader.corruption("\(what): malformed decimal key '\(key)'", at: keyStart)
            }
            return .decimal(decimal)
        case .string: return .string(try reader.string(what))
        case .falseValue: return .boolean(false)
        case .trueValue: return .boolean(true)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try reader.double(what)))
        case .binary: return .binary(try reader.data(what))
        case .uuid:
            let b = try reader.raw(16, what)
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .uri: return .uri(try reader.string(what))
        case .object:
            let entityStart = reader.offset
            let number = try reader.count("entity of \(what)")
            guard number < schema.entities.count else {
                throw reader.corruption("entity number \(number) of \(what) is out of range", at: entityStart)
            }
            let keyStart = reader.offset
            let key = try reader.signed(what)
            guard key >= 1 else { throw reader.corruption("\(what) points to primary key \(key)", at: keyStart) }
            return .object(ObjectID(storeIdentifier: identifier, entityName: schema.entities[number].name, key: .permanent(key)))
        }
    }
}
