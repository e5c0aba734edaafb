import Foundation
import GRDB
import StrataModel
import StrataStore
import StrataQuery

/// What a Strata SQLite store records about itself, in its `Z_METADATA`
/// table (`Z_KEY TEXT PRIMARY KEY, Z_VALUE BLOB`), one row per key:
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
/// ``SQLiteSchema/init(model:entityNames:entityNumbers:)`` on every open, so
/// a row's `Z_ENT` keeps its meaning for the store's whole life (written at
/// creation, rewritten after each migration with the numbers of the added
/// entities).
struct SQLiteStoreMetadata: Sendable, Codable, Equatable {
    /// The metadata table.
    static let tableName = "Z_METADATA"
    /// The primary-key allocation table: one row per hierarchy, keyed by root entity.
    static let primaryKeyTableName = "Z_PRIMARYKEY"
    /// The layout version this code writes.
    static let currentFormatVersion = 1

    /// A persisted attribute as the version hash sees it.
    struct AttributeShape: Sendable, Codable, Equatable {
        var type: String
        var isOptional: Bool
        var versionHashModifier: String?
    }

    /// A persisted relationship as the version hash sees it.
    struct RelationshipShape: Sendable, Codable, Equatable {
        var destination: String
        var inverse: String?
        var isToMany: Bool
        var isOrdered: Bool
        var isOptional: Bool
        var minCount: Int
        var maxCount: Int
        var versionHashModifier: String?
    }

    /// An entity's persisted shape: what its version hash covers, by property.
    struct EntityShape: Sendable, Codable, Equatable {
        var parent: String?
        var isAbstract: Bool
        var versionHashModifier: String?
        /// Declared persisted attributes by name.
        var attributes: [String: AttributeShape]
        /// Declared persisted relationships by name.
        var relationships: [String: RelationshipShape]
    }

    /// What a column holds, in a form that survives JSON.
    struct Role: Sendable, Codable, Hashable {
        /// `pk`, `ent`, `opt`, `attribute`, `foreignKey` or `order`.
        var kind: String
        var entity: String?
        var name: String?

        init(_ role: SQLiteSchema.Column.Role) {
            switch role {
            case .primaryKey: self.init(kind: "pk")
            case .entityNumber: self.init(kind: "ent")
            case .version: self.init(kind: "opt")
            case .attribute(let entity, let name): self.init(kind: "attribute", entity: entity, name: name)
            case .foreignKey(let entity, let name): self.init(kind: "foreignKey", entity: entity, name: name)
            case .order(let entity, let name): self.init(kind: "order", entity: entity, name: name)
            }
        }

        init(kind: String, entity: String? = nil, name: String? = nil) {
            self.kind = kind
            self.entity = entity
            self.name = name
        }

        /// `Entity.name` (or the kind for system columns), for messages.
        var displayName: String {
            guard let entity, let name else { return kind }
            return "\(entity).\(name)"
        }
    }

    /// A column of a stored table.
    struct Column: Sendable, Codable, Equatable {
        var name: String
        var type: String
        var role: Role
    }

    /// A hierarchy table.
    struct Table: Sendable, Codable, Equatable {
        var name: String
        var rootEntity: String
        var entities: [String]
        var columns: [Column]
    }

    /// A join table, identified by its owning relationship.
    struct JoinTable: Sendable, Codable, Equatable {
        var name: String
        var entity: String
        var relationship: String
        var sourceColumn: String
        var destinationColumn: String
        var orderColumn: String?
        var inverseOrderColumn: String?
    }

    /// An index with the statement that creates it.
    struct Index: Sendable, Codable, Equatable {
        var name: String
        var table: String
        var sql: String
    }

    /// The physical layout of the store's schema.
    struct Layout: Sendable, Codable, Equatable {
        /// `Z_ENT` numbers of the held entities, as assigned when each entity
        /// first joined the store.
        var entityNumbers: [String: Int64]
        var tables: [Table]
        var joinTables: [JoinTable]
        var indexes: [Index]
    }

    var formatVersion: Int
    var identifier: String
    var modelName: String
    var versionHashes: [String: String]
    var entities: [String: EntityShape]
    var layout: Layout

    // MARK: - From the model

    /// The metadata a store of `schema` (over `model`) has.
    init(identifier: String, model: ObjectModel, schema: SQLiteSchema) throws(StrataError) {
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
        self.layout = try Self.layout(of: schema)
    }

    static func shape(of entity: EntityDescription) -> EntityShape {
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

    static func layout(of schema: SQLiteSchema) throws(StrataError) -> Layout {
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
                      columns: table.columns.map { Column(name: $0.name, type: $0.sqlType, role: Role($0.role)) })
            },
            joinTables: schema.joinTables.map {
                JoinTable(name: $0.name, entity: $0.entity, relationship: $0.relationship, sourceColumn: $0.sourceColumn,
                          destinationColumn: $0.destinationColumn, orderColumn: $0.orderColumn, inverseOrderColumn: $0.inverseOrderColumn)
            },
            indexes: zip(schema.indexes, indexSQL).map { Index(name: $0.name, table: $0.table, sql: $1) }
        )
    }

    static func hex(_ bytes: [UInt8]) -> String {
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
    static func fingerprint(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    // MARK: - Reading and writing

    /// What a database file holds.
    enum Probe: Sendable {
        /// No table at all: a new store.
        case empty
        /// Tables, but no Strata metadata.
        case foreign(tables: [String])
        /// A Strata store.
        case found(SQLiteStoreMetadata)
    }

    /// The statements creating the store's own tables.
    static var bookkeepingStatements: [String] {
        [
            "CREATE TABLE \(SQLiteSchema.quote(tableName)) (\(SQLiteSchema.quote("Z_KEY")) TEXT PRIMARY KEY, \(SQLiteSchema.quote("Z_VALUE")) BLOB)",
            "CREATE TABLE \(SQLiteSchema.quote(primaryKeyTableName)) (\(SQLiteSchema.quote("Z_NAME")) TEXT PRIMARY KEY, \(SQLiteSchema.quote("Z_MAX")) INTEGER NOT NULL)",
        ]
    }

    /// Reads the metadata of the database `db` is connected to. Throws
    /// 134080 when it is unreadable or written by a newer format.
    static func probe(_ db: Database, path: String) throws -> Probe {
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        guard !tables.isEmpty else { return .empty }
        guard tables.contains(where: { $0.caseInsensitiveCompare(tableName) == .orderedSame }) else {
            return .foreign(tables: tables.sorted())
        }
        var values: [String: DatabaseValue] = [:]
        let rows = try Row.fetchAll(db, sql: "SELECT \(SQLiteSchema.quote("Z_KEY")), \(SQLiteSchema.quote("Z_VALUE")) FROM \(SQLiteSchema.quote(tableName))")
        for row in rows {
            let key: DatabaseValue = row[0]
            if case .string(let name) = key.storage { values[name] = row[1] as DatabaseValue }
        }
        func text(_ key: String) throws -> String {
            switch values[key]?.storage {
            case .string(let s)?: return s
            case .blob(let data)?: return String(decoding: data, as: UTF8.self)
            case .int64(let v)?: return String(v)
            default: throw StrataError(.storeOpen, "store \(path): metadata key '\(key)' is missing from \(tableName)")
            }
        }
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
        let metadata = SQLiteStoreMetadata(
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
        return .found(metadata)
    }

    private init(formatVersion: Int, identifier: String, modelName: String, versionHashes: [String: String], entities: [String: EntityShape], layout: Layout) {
        self.formatVersion = formatVersion
        self.identifier = identifier
        self.modelName = modelName
        self.versionHashes = versionHashes
        self.entities = entities
        self.layout = layout
    }

    /// Writes every key (inside the caller's transaction).
    func write(_ db: Database) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func json(_ value: some Encodable) throws -> String {
            String(decoding: try encoder.encode(value), as: UTF8.self)
        }
        let layoutJSON = try json(layout)
        let rows: [(String, DatabaseValue)] = [
            ("identifier", identifier.databaseValue),
            ("formatVersion", Int64(formatVersion).databaseValue),
            ("modelName", modelName.databaseValue),
            ("versionHashes", try json(versionHashes).databaseValue),
            ("entities", try json(entities).databaseValue),
            ("layout", layoutJSON.databaseValue),
            ("layoutFingerprint", Self.fingerprint(layoutJSON).databaseValue),
        ]
        let sql = "INSERT OR REPLACE INTO \(SQLiteSchema.quote(Self.tableName)) (\(SQLiteSchema.quote("Z_KEY")), \(SQLiteSchema.quote("Z_VALUE"))) VALUES (?, ?)"
        for (key, value) in rows {
            try db.execute(sql: sql, arguments: [key, value])
        }
    }

    /// Whether a store with `self` needs nothing to serve `target`.
    func isIdentical(to target: SQLiteStoreMetadata) -> Bool {
        versionHashes == target.versionHashes && entities == target.entities && layout == target.layout
    }
}
