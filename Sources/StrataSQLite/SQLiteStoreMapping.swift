import GRDB
import NIOConcurrencyHelpers
import StrataModel
import StrataStore
import StrataQuery

/// The store's view of its ``SQLSchema``, computed once at open: for
/// every held entity, which column holds which property, how its to-one
/// destinations' entities are found, and the SQL that inserts its rows.
/// A class: every save, fetch and decoder holds it, and copying its many
/// tables into each would retain every one of them.
final class SQLiteStoreMapping: Sendable {
    /// A persisted attribute and its column.
    struct AttributeField: Sendable {
        var name: String
        var column: String
        var type: AttributeType
    }

    /// How the entity of a to-one destination is known.
    enum DestinationResolution: Sendable {
        /// The declared destination has no held subentity: it is the entity.
        case fixed(String)
        /// Rows of several entities share the destination's table: read its
        /// `Z_ENT` (the declared destination is the fallback for dangling keys).
        case lookup(table: String, declared: String)
        /// The destination is not held by this store (no value is ever stored).
        case external(String)
    }

    /// A hierarchy table holding the destinations of a relationship.
    struct DestinationTable: Sendable {
        /// The table's name.
        var name: String
        /// Its hierarchy's root entity: an ID naming it may be a row of any
        /// entity of the table; one naming a subentity must be a row of that
        /// subentity (or below).
        var rootEntity: String
    }

    /// A persisted to-one relationship and its foreign-key column.
    struct ToOneField: Sendable {
        var name: String
        var column: String
        var destination: String
        var resolution: DestinationResolution
        /// The destinations' table; nil when this store does not hold them.
        var destinationTable: DestinationTable?
    }

    /// A persisted to-many relationship and its storage.
    struct ToManyField: Sendable {
        var name: String
        var destination: String
        var storage: SQLSchema.RelationshipStorage
        /// The destinations' table; nil when this store does not hold them.
        var destinationTable: DestinationTable?
    }

    /// Where a property's value goes in an INSERT row.
    enum InsertSlot: Sendable {
        /// `attributes[field]`, at `position` of the row.
        case attribute(field: Int, position: Int)
        /// `toOnes[field]`, at `position` of the row.
        case toOne(field: Int, position: Int)
    }

    /// Everything about one held entity. A class so that the per-object
    /// records of a save share it instead of copying its tables.
    final class Entity: Sendable {
        let name: String
        let number: Int64
        let table: String
        let isAbstract: Bool
        let attributes: [AttributeField]
        let toOnes: [ToOneField]
        let toManys: [String: ToManyField]
        let attributeIndex: [String: Int]
        let toOneIndex: [String: Int]
        /// Attributes and to-ones by name, with their INSERT position.
        let insertSlots: NameLookup<InsertSlot>
        /// Names of transient properties (accepted and ignored in saves).
        let transientNames: Set<String>
        /// Columns of an INSERT, in order: `Z_PK`, `Z_ENT`, then attributes,
        /// foreign keys and the order columns of ordered to-manys whose
        /// inverse is one of this entity's to-ones.
        let insertColumns: [String]
        /// Position of each column in ``insertColumns``.
        let insertPosition: [String: Int]
        /// `INSERT INTO t (Z_PK, Z_ENT, Z_OPT, …) VALUES (?, ?, 1, …)`.
        let insertSQL: String
        /// A snapshot's values to start from: every attribute and to-one
        /// `.null`, in one layout every snapshot of the entity shares.
        let snapshotTemplate: PropertyValues
        /// The insert steps of the last layout saved (``SQLiteInsertPlan``).
        let lastInsertSteps = NIOLockedValueBox<SQLiteInsertPlan.CompiledSteps?>(nil)

        init(name: String, number: Int64, table: String, isAbstract: Bool, attributes: [AttributeField], toOnes: [ToOneField],
             toManys: [String: ToManyField], transientNames: Set<String>, insertColumns: [String], insertSQL: String) {
            self.name = name
            self.number = number
            self.table = table
            self.isAbstract = isAbstract
            self.attributes = attributes
            self.toOnes = toOnes
            self.toManys = toManys
            self.transientNames = transientNames
            self.insertColumns = insertColumns
            self.insertSQL = insertSQL
            var positions: [String: Int] = [:]
            for (i, column) in insertColumns.enumerated() { positions[column] = i }
            self.insertPosition = positions
            var attributeIndex: [String: Int] = [:]
            var toOneIndex: [String: Int] = [:]
            var slots: [String: InsertSlot] = [:]
            for (i, field) in attributes.enumerated() {
                attributeIndex[field.name] = i
                if let position = positions[field.column] { slots[field.name] = .attribute(field: i, position: position) }
            }
            for (i, field) in toOnes.enumerated() {
                toOneIndex[field.name] = i
                if let position = positions[field.column] { slots[field.name] = .toOne(field: i, position: position) }
            }
            self.attributeIndex = attributeIndex
            self.toOneIndex = toOneIndex
            self.insertSlots = NameLookup(slots)
            self.snapshotTemplate = PropertyValues(layout: PropertyValues.Layout(names: attributes.map(\.name) + toOnes.map(\.name)), repeating: .null)
        }

        /// The INSERT slot of an attribute or to-one (see ``NameLookup``).
        @inline(__always)
        func slot(named name: String) -> InsertSlot? {
            insertSlots[name]
        }
    }

    /// A join-table column holding primary keys of a hierarchy table's rows.
    struct JoinReference: Sendable {
        var table: String
        var column: String
    }

    let schema: SQLSchema
    let compiler: SQLQueryCompiler
    let entities: [String: Entity]
    /// Held entities by `Z_ENT` number.
    let entitiesByNumber: [Int64: Entity]
    /// Join tables by name.
    let joinTables: [String: SQLSchema.JoinTable]
    /// For each hierarchy table, the join-table columns referencing its rows.
    let joinReferences: [String: [JoinReference]]
    /// Hierarchy tables by name.
    let tables: [String: SQLSchema.Table]
    /// The key-allocation statements of each hierarchy table, built once.
    let keyAllocation: [String: KeyAllocationSQL]
    /// The hierarchy tables whose rows decode with no statement but the
    /// one read: no entity stored there has a to-one whose destination's
    /// entity must be looked up (a destination with subentities in one
    /// table).
    let tablesDecodedInOneStatement: Set<String>

    /// The mapping of `schema`. Its tables never use the store's own names
    /// (``SQLSchema/isReserved(_:)``): the layout skips them.
    init(schema: SQLSchema) {
        let model = schema.model
        let q = SQLSchema.quote
        func destinationTable(_ entity: String) -> DestinationTable? {
            schema.table(for: entity).map { DestinationTable(name: $0.name, rootEntity: $0.rootEntity) }
        }
        var entities: [String: Entity] = [:]
        var byNumber: [Int64: Entity] = [:]
        for name in schema.entityNames {
            guard let table = schema.table(for: name), let number = schema.entityNumber(of: name) else { continue }
            var attributes: [AttributeField] = []
            var transient: Set<String> = []
            for attribute in model.attributes(of: name) {
                if let column = schema.column(forAttribute: attribute.name, in: name), attribute.isPersisted {
                    attributes.append(AttributeField(name: attribute.name, column: column, type: attribute.type))
                } else {
                    transient.insert(attribute.name)
                }
            }
            var toOnes: [ToOneField] = []
            var toManys: [String: ToManyField] = [:]
            for relationship in model.relationships(of: name) {
                guard let storage = schema.storage(ofRelationship: relationship.name, in: name) else { continue }
                let destination = relationship.destinationEntityName
                switch storage {
                case .transient:
                    transient.insert(relationship.name)
                case .foreignKey(_, let column):
                    toOnes.append(ToOneField(name: relationship.name, column: column, destination: destination,
                                             resolution: Self.resolution(of: destination, schema: schema),
                                             destinationTable: destinationTable(destination)))
                case .external where !relationship.isToMany:
                    // A to-one always has a column; this branch is defensive.
                    transient.insert(relationship.name)
                default:
                    toManys[relationship.name] = ToManyField(name: relationship.name, destination: destination, storage: storage,
                                                             destinationTable: destinationTable(destination))
                }
            }
            var insertColumns = ["Z_PK", "Z_ENT"] + attributes.map(\.column) + toOnes.map(\.column)
            let foreignKeys = Set(toOnes.map(\.column))
            for column in table.columns {
                guard case .order(let owner, let relationshipName) = column.role,
                      let toMany = model.relationship(named: relationshipName, in: owner),
                      let inverse = model.inverse(of: toMany),
                      case .foreignKey(_, let fk)? = schema.storage(ofRelationship: inverse.name, in: name),
                      foreignKeys.contains(fk) else { continue }
                insertColumns.append(column.name)
            }
            let valueColumns = insertColumns.dropFirst(2)
            let sql = "INSERT INTO \(q(table.name)) (\(q("Z_PK")), \(q("Z_ENT")), \(q("Z_OPT"))"
                + valueColumns.map { ", " + q($0) }.joined()
                + ") VALUES (?, ?, 1" + String(repeating: ", ?", count: valueColumns.count) + ")"
            let entity = Entity(
                name: name, number: number, table: table.name, isAbstract: model.entity(named: name)?.isAbstract ?? false,
                attributes: attributes, toOnes: toOnes, toManys: toManys, transientNames: transient,
                insertColumns: insertColumns, insertSQL: sql
            )
            entities[name] = entity
            byNumber[number] = entity
        }

        var references: [String: [JoinReference]] = [:]
        for join in schema.joinTables {
            if let owner = schema.table(for: join.entity) {
                references[owner.name, default: []].append(JoinReference(table: join.name, column: join.sourceColumn))
            }
            if let relationship = model.relationship(named: join.relationship, in: join.entity),
               let destination = schema.table(for: relationship.destinationEntityName) {
                references[destination.name, default: []].append(JoinReference(table: join.name, column: join.destinationColumn))
            }
        }

        self.schema = schema
        self.compiler = SQLQueryCompiler(schema: schema)
        self.entities = entities
        self.entitiesByNumber = byNumber
        self.joinTables = Dictionary(schema.joinTables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.joinReferences = references
        self.tables = Dictionary(schema.tables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.keyAllocation = tables.mapValues { KeyAllocationSQL(table: $0.name) }
        self.tablesDecodedInOneStatement = Set(schema.tables.filter { table in
            table.entities.allSatisfy { name in
                entities[name]?.toOnes.allSatisfy { toOne in
                    if case .lookup = toOne.resolution { return false }
                    return true
                } ?? true
            }
        }.map(\.name))
    }

    private static func resolution(of destination: String, schema: SQLSchema) -> DestinationResolution {
        guard let table = schema.table(for: destination) else { return .external(destination) }
        let candidates = schema.entities(covering: destination, includingSubentities: true)
        if candidates == [destination] { return .fixed(destination) }
        return .lookup(table: table.name, declared: destination)
    }

    /// The held entity an object ID names, or a 134030-style error naming it.
    func entity(of objectID: ObjectID) -> Entity? {
        entities[objectID.entityName]
    }
}
