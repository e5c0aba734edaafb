import Foundation
import StrataModel

/// What a Strata SQL store (SQLite, PostgreSQL) records about itself, in
/// its `Z_METADATA` table (`Z_KEY` text primary key, `Z_VALUE`), one row
/// per key:
///
/// | key | value |
/// |---|---|
/// | `identifier` | the store's UUID, generated at creation |
/// | `formatVersion` | ``currentFormatVersion`` |
/// | `modelName` | the model's name (informational) |
/// | `versionHashes` | JSON object: held entity → version hash (hex) |
/// | `entities` | JSON object: held entity → its persisted shape (``EntityShape``) |
/// | `layout` | JSON ``Layout``: entity numbers, tables and their columns by role, join tables, indexes with their SQL |
/// | `layoutFingerprint` | FNV-1a 64 (hex) of the `layout` JSON |
///
/// The shapes let a later open say exactly which property changed and how;
/// the layout lets it compute the DDL of a lightweight migration without
/// the old model, and its entity numbers are handed back to
/// ``SQLSchema/init(model:entityNames:entityNumbers:)`` on every open, so
/// a row's `Z_ENT` keeps its meaning for the store's whole life (written at
/// creation, rewritten after each migration with the numbers of the added
/// entities).
package struct SQLStoreMetadata: Sendable, Codable, Equatable {
    /// The metadata table.
    package static let tableName = "Z_METADATA"
    /// The primary-key allocation table: one row per hierarchy, keyed by root entity.
    package static let primaryKeyTableName = "Z_PRIMARYKEY"
    /// The layout version this code writes.
    package static let currentFormatVersion = 1

    /// A persisted attribute as the version hash sees it.
    package struct AttributeShape: Sendable, Codable, Equatable {
        package var type: String
        package var isOptional: Bool
        package var versionHashModifier: String?
    }

    /// A persisted relationship as the version hash sees it.
    package struct RelationshipShape: Sendable, Codable, Equatable {
        package var destination: String
        package var inverse: String?
        package var isToMany: Bool
        package var isOrdered: Bool
        package var isOptional: Bool
        package var minCount: Int
        package var maxCount: Int
        package var versionHashModifier: String?
    }

    /// An entity's persisted shape: what its version hash covers, by property.
    package struct EntityShape: Sendable, Codable, Equatable {
        package var parent: String?
        package var isAbstract: Bool
        package var versionHashModifier: String?
        /// Declared persisted attributes by name.
        package var attributes: [String: AttributeShape]
        /// Declared persisted relationships by name.
        package var relationships: [String: RelationshipShape]
    }

    /// What a column holds, in a form that survives JSON.
    package struct Role: Sendable, Codable, Hashable {
        /// `pk`, `ent`, `opt`, `attribute`, `foreignKey` or `order`.
        package var kind: String
        package var entity: String?
        package var name: String?

        package init(_ role: SQLSchema.Column.Role) {
            switch role {
            case .primaryKey: self.init(kind: "pk")
            case .entityNumber: self.init(kind: "ent")
            case .version: self.init(kind: "opt")
            case .attribute(let entity, let name): self.init(kind: "attribute", entity: entity, name: name)
            case .foreignKey(let entity, let name): self.init(kind: "foreignKey", entity: entity, name: name)
            case .order(let entity, let name): self.init(kind: "order", entity: entity, name: name)
            }
        }

        package init(kind: String, entity: String? = nil, name: String? = nil) {
            self.kind = kind
            self.entity = entity
            self.name = name
        }

        /// `Entity.name` (or the kind for system columns), for messages.
        package var displayName: String {
            guard let entity, let name else { return kind }
            return "\(entity).\(name)"
        }
    }

    /// A column of a stored table.
    package struct Column: Sendable, Codable, Equatable {
        package var name: String
        package var type: String
        package var role: Role
    }

    /// A hierarchy table.
    package struct Table: Sendable, Codable, Equatable {
        package var name: String
        package var rootEntity: String
        package var entities: [String]
        package var columns: [Column]
    }

    /// A join table, identified by its owning relationship.
    package struct JoinTable: Sendable, Codable, Equatable {
        package var name: String
        package var entity: String
        package var relationship: String
        package var sourceColumn: String
        package var destinationColumn: String
        package var orderColumn: String?
        package var inverseOrderColumn: String?
    }

    /// An index with the statement that creates it.
    package struct Index: Sendable, Codable, Equatable {
        package var name: String
        package var table: String
        package var sql: String
    }

    /// The physical layout of the store's schema.
    package struct Layout: Sendable, Codable, Equatable {
        /// `Z_ENT` numbers of the held entities, as assigned when each entity
        /// first joined the store.
        package var entityNumbers: [String: Int64]
        package var tables: [Table]
        package var joinTables: [JoinTable]
        package var indexes: [Index]
    }

    package var formatVersion: Int
    package var identifier: String
    package var modelName: String
    package var versionHashes: [String: String]
    package var entities: [String: EntityShape]
    package var layout: Layout

    // MARK: - From the model

    /// The metadata a store of `schema` (over `model`) has.
    /// `columnType` gives each column's type in the store's database
    /// (SQLite's own by default).
    package init(identifier: String, model: ObjectModel, schema: SQLSchema, columnType: (SQLSchema.Column) -> String = \.sqlType) throws(StrataError) {
        self.formatVersion = Self.currentFormatVersion
        self.identifier = identifier
        self.modelName = model.name
        var hashes: [String: String] = [:]
        var shapes: [String: EntityShape] = [:]
        for name in schema.entityNames {
            hashes[name] = Self.hex(model.versionHash(ofEntity: name))
            if let entity = model.entity(named: name) { shapes[name] = Self.shape(of: entity) }
        }
        self.versionHashes = hashes
        self.entities = shapes
        self.layout = try Self.layout(of: schema, columnType: columnType)
    }

    package static func shape(of entity: EntityDescription) -> EntityShape {
        var attributes: [String: AttributeShape] = [:]
        for attribute in entity.attributes where attribute.isPersisted && attributes[attribute.name] == nil {
            attributes[attribute.name] = AttributeShape(type: attribute.type.xcodeName, isOptional: attribute.isOptional, versionHashModifier: attribute.versionHashModifier)
        }
        var relationships: [String: RelationshipShape] = [:]
        for relationship in entity.relationships where !relationship.isTransient && relationships[relationship.name] == nil {
            relationships[relationship.name] = RelationshipShape(
                destination: relationship.destinationEntityName,
                inverse: relationship.inverseName,
                isToMany: relationship.isToMany,
                isOrdered: relationship.isOrdered,
                isOptional: relationship.isOptional,
                minCount: relationship.minCount,
                maxCount: relationship.maxCount,
                versionHashModifier: relationship.versionHashModifier
            )
        }
        return EntityShape(parent: entity.parentName, isAbstract: entity.isAbstract, versionHashModifier: entity.versionHashModifier, attributes: attributes, relationships: relationships)
    }

    package static func layout(of schema: SQLSchema, columnType: (SQLSchema.Column) -> String = \.sqlType) throws(StrataError) -> Layout {
        let numbers = schema.entityNumberMap
        let statements = schema.createStatements()
        let expected = schema.tables.count + schema.joinTables.count + schema.indexes.count
        guard statements.count == expected else {
            throw StrataError(.storeOpen, "the SQLite schema produced \(statements.count) statements for \(expected) tables and indexes")
        }
        let indexSQL = statements.suffix(schema.indexes.count)
        return Layout(
            entityNumbers: numbers,
            tables: schema.tables.map { table in
                Table(name: table.name, rootEntity: table.rootEntity, entities: table.entities,
                      columns: table.columns.map { Column(name: $0.name, type: columnType($0), role: Role($0.role)) })
            },
            joinTables: schema.joinTables.map {
                JoinTable(name: $0.name, entity: $0.entity, relationship: $0.relationship, sourceColumn: $0.sourceColumn,
                          destinationColumn: $0.destinationColumn, orderColumn: $0.orderColumn, inverseOrderColumn: $0.inverseOrderColumn)
            },
            indexes: zip(schema.indexes, indexSQL).map { Index(name: $0.name, table: $0.table, sql: $1) }
        )
    }

    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// FNV-1a 64 of `text`, as 16 hex digits.
    package static func fingerprint(_ text: String) -> String {
        let digits = String(fnv1a64(text), radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// FNV-1a 64 of `text`'s UTF-8 bytes: the same in every process.
    package static func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    package init(formatVersion: Int, identifier: String, modelName: String, versionHashes: [String: String], entities: [String: EntityShape], layout: Layout) {
        self.formatVersion = formatVersion
        self.identifier = identifier
        self.modelName = modelName
        self.versionHashes = versionHashes
        self.entities = entities
        self.layout = layout
    }

    /// Whether a store with `self` needs nothing to serve `target`.
    package func isIdentical(to target: SQLStoreMetadata) -> Bool {
        versionHashes == target.versionHashes && entities == target.entities && layout == target.layout
    }

    // MARK: - As keys and texts

    /// The metadata read from its keys' texts (`text` throws for a missing
    /// key); 134080 naming `path` when it is unreadable or written by a
    /// newer format.
    package static func decode(path: String, _ text: (String) throws -> String) throws -> SQLStoreMetadata {
        func json<T: Decodable>(_ key: String, as type: T.Type) throws -> T {
            let raw = try text(key)
            do {
                return try JSONDecoder().decode(T.self, from: Data(raw.utf8))
            } catch {
                throw StrataError(.storeOpen, "store \(path): metadata key '\(key)' is unreadable: \(error)")
            }
        }
        let format = Int(try text("formatVersion")) ?? 0
        guard format >= 1, format <= currentFormatVersion else {
            throw StrataError(.storeOpen, "store \(path) has metadata format \(format); this version of Strata reads format \(currentFormatVersion)")
        }
        let metadata = SQLStoreMetadata(
            formatVersion: format,
            identifier: try text("identifier"),
            modelName: (try? text("modelName")) ?? "",
            versionHashes: try json("versionHashes", as: [String: String].self),
            entities: try json("entities", as: [String: EntityShape].self),
            layout: try json("layout", as: Layout.self)
        )
        guard !metadata.identifier.isEmpty else {
            throw StrataError(.storeOpen, "store \(path): metadata has an empty identifier")
        }
        var owners: [Int64: String] = [:]
        for (name, number) in metadata.layout.entityNumbers.sorted(by: { $0.key < $1.key }) {
            guard number > 0 else {
                throw StrataError(.storeOpen, "store \(path): metadata gives entity '\(name)' the entity number \(number), which is not positive")
            }
            if let other = owners.updateValue(name, forKey: number) {
                throw StrataError(.storeOpen, "store \(path): metadata gives entities '\(other)' and '\(name)' the same entity number \(number)")
            }
        }
        return metadata
    }

    /// Every key with its text (JSON for the structured ones), in a fixed
    /// order; `formatVersion` as its number.
    package func keyTexts() throws -> [(key: String, text: String)] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func json(_ value: some Encodable) throws -> String {
            String(decoding: try encoder.encode(value), as: UTF8.self)
        }
        let layoutJSON = try json(layout)
        return [
            ("identifier", identifier),
            ("formatVersion", String(formatVersion)),
            ("modelName", modelName),
            ("versionHashes", try json(versionHashes)),
            ("entities", try json(entities)),
            ("layout", layoutJSON),
            ("layoutFingerprint", Self.fingerprint(layoutJSON)),
        ]
    }
}
