import StrataModel

/// A SQL store's view of its ``SQLSchema``, computed once at open: for
/// every held entity, which column holds which property, how its to-one
/// destinations' entities are found, and the columns of its rows; the
/// same for every SQL backend. `Extras` is what a backend keeps per entity
/// besides (its prepared INSERT, its caches), made once by the backend.
/// A class: every save, fetch and decoder holds it, and copying its many
/// tables into each would retain every one of them.
package final class SQLStoreMapping<Extras: Sendable>: Sendable {
    /// A persisted attribute and its column.
    package struct AttributeField: Sendable {
        package var name: String
        package var column: String
        package var type: AttributeType
    }

    /// How the entity of a to-one destination is known.
    package enum DestinationResolution: Sendable {
        /// The declared destination has no held subentity: it is the entity.
        case fixed(String)
        /// Rows of several entities share the destination's table: read its
        /// `Z_ENT` (the declared destination is the fallback for dangling keys).
        case lookup(table: String, declared: String)
        /// The destination is not held by this store (no value is ever stored).
        case external(String)
    }

    /// A hierarchy table holding the destinations of a relationship.
    package struct DestinationTable: Sendable {
        /// The table's name.
        package var name: String
        /// Its hierarchy's root entity: an ID naming it may be a row of any
        /// entity of the table; one naming a subentity must be a row of that
        /// subentity (or below).
        package var rootEntity: String
    }

    /// A persisted to-one relationship and its foreign-key column.
    package struct ToOneField: Sendable {
        package var name: String
        package var column: String
        package var destination: String
        package var resolution: DestinationResolution
        /// The destinations' table; nil when this store does not hold them.
        package var destinationTable: DestinationTable?
    }

    /// A persisted to-many relationship and its storage.
    package struct ToManyField: Sendable {
        package var name: String
        package var destination: String
        package var storage: SQLSchema.RelationshipStorage
        /// The destinations' table; nil when this store does not hold them.
        package var destinationTable: DestinationTable?
    }

    /// Where a property's value goes in an INSERT row.
    package enum InsertSlot: Sendable {
        /// `attributes[field]`, at `position` of the row.
        case attribute(field: Int, position: Int)
        /// `toOnes[field]`, at `position` of the row.
        case toOne(field: Int, position: Int)
    }

    /// Everything about one held entity. A class so that the per-object
    /// records of a save share it instead of copying its tables.
    package final class Entity: Sendable {
        package let name: String
        package let number: Int64
        package let table: String
        package let isAbstract: Bool
        package let attributes: [AttributeField]
        package let toOnes: [ToOneField]
        package let toManys: [String: ToManyField]
        package let attributeIndex: [String: Int]
        package let toOneIndex: [String: Int]
        /// Attributes and to-ones by name, with their INSERT position.
        package let insertSlots: NameLookup<InsertSlot>
        /// Names of transient properties (accepted and ignored in saves).
        package let transientNames: Set<String>
        /// Columns of an INSERT, in order: `Z_PK`, `Z_ENT`, then attributes,
        /// foreign keys and the order columns of ordered to-manys whose
        /// inverse is one of this entity's to-ones.
        package let insertColumns: [String]
        /// Position of each column in ``insertColumns``.
        package let insertPosition: [String: Int]
        /// `INSERT INTO t (Z_PK, Z_ENT, Z_OPT, …) VALUES (?, ?, 1, …)`,
        /// with the dialect's placeholders.
        package let insertSQL: String
        /// A snapshot's values to start from: every attribute and to-one
        /// `.null`, in one layout every snapshot of the entity shares.
        package let snapshotTemplate: PropertyValues
        /// The backend's own per-entity values.
        package let extras: Extras

        init(name: String, number: Int64, table: String, isAbstract: Bool, attributes: [AttributeField], toOnes: [ToOneField],
             toManys: [String: ToManyField], transientNames: Set<String>, insertColumns: [String], insertSQL: String, extras: Extras) {
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
            self.extras = extras
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
        package func slot(named name: String) -> InsertSlot? {
            insertSlots[name]
        }
    }

    /// A join-table column holding primary keys of a hierarchy table's rows.
    package struct JoinReference: Sendable {
        package var table: String
        package var column: String
    }

    package let schema: SQLSchema
    package let compiler: SQLQueryCompiler
    package let entities: [String: Entity]
    /// Held entities by `Z_ENT` number.
    package let entitiesByNumber: [Int64: Entity]
    /// Join tables by name.
    package let joinTables: [String: SQLSchema.JoinTable]
    /// For each hierarchy table, the join-table columns referencing its rows.
    package let joinReferences: [String: [JoinReference]]
    /// Hierarchy tables by name.
    package let tables: [String: SQLSchema.Table]
    /// The hierarchy tables whose rows decode with no statement but the
    /// one read: no entity stored there has a to-one whose destination's
    /// entity must be looked up (a destination with subentities in one
    /// table).
    package let tablesDecodedInOneStatement: Set<String>
    /// Each held entity's table when it is one of
    /// ``tablesDecodedInOneStatement`` (for readers asking per fetch,
    /// without copying the schema's table or hashing its name).
    package let oneStatementTableByEntity: [String: String]

    /// The mapping of `schema`, whose queries `compiler` writes; `extras`
    /// makes a backend's values for each entity (given the entity's name,
    /// its hierarchy table and its insert columns). Its tables never use the store's own names
    /// (``SQLSchema/isReserved(_:)``): the layout skips them.
    package init(schema: SQLSchema, compiler: SQLQueryCompiler, extras: (_ entity: String, _ table: String, _ insertColumns: [String]) -> Extras) {
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
            let statement = compiler.dialect.statement(sql)
            let entity = Entity(
                name: name, number: number, table: table.name, isAbstract: model.entity(named: name)?.isAbstract ?? false,
                attributes: attributes, toOnes: toOnes, toManys: toManys, transientNames: transient,
                insertColumns: insertColumns, insertSQL: statement, extras: extras(name, table.name, insertColumns)
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
        self.compiler = compiler
        self.entities = entities
        self.entitiesByNumber = byNumber
        self.joinTables = Dictionary(schema.joinTables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.joinReferences = references
        self.tables = Dictionary(schema.tables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let oneStatement = Set(schema.tables.filter { table in
            table.entities.allSatisfy { name in
                entities[name]?.toOnes.allSatisfy { toOne in
                    if case .lookup = toOne.resolution { return false }
                    return true
                } ?? true
            }
        }.map(\.name))
        self.tablesDecodedInOneStatement = oneStatement
        self.oneStatementTableByEntity = entities.compactMapValues { oneStatement.contains($0.table) ? $0.table : nil }
    }

    private static func resolution(of destination: String, schema: SQLSchema) -> DestinationResolution {
        guard let table = schema.table(for: destination) else { return .external(destination) }
        let candidates = schema.entities(covering: destination, includingSubentities: true)
        if candidates == [destination] { return .fixed(destination) }
        return .lookup(table: table.name, declared: destination)
    }

    /// The held entity an object ID names, or a 134030-style error naming it.
    package func entity(of objectID: ObjectID) -> Entity? {
        entities[objectID.entityName]
    }

    /// How a store reads the destinations of one object's relationship.
    package enum DestinationsRead: Sendable {
        /// The relationship keeps nothing in this store (transient, or its
        /// destinations are in another store): there are none.
        case none
        /// `source` reads the object's `Z_ENT` (its one parameter: the
        /// object's key); `destinations` reads `Z_PK`, `Z_ENT` of its
        /// destinations in order (a to-many by its order column when
        /// ordered, else by key; a to-one's one row), its one parameter the
        /// object's key; both in the dialect's placeholders. A `Z_ENT` that
        /// is no entity of the store is `fallback`.
        case read(source: String, destinations: String, fallback: String)
        /// The entity has no relationship of that name.
        case unknown
    }

    /// The statements reading `relationship`'s destinations of an object of `entity`.
    package func destinationsRead(of relationship: String, in entity: Entity) -> DestinationsRead {
        let q = SQLSchema.quote
        let sql: String
        let fallback: String
        if let field = entity.toManys[relationship] {
            fallback = field.destination
            switch field.storage {
            case .inverseForeignKey(let table, let column, let order):
                let ordering = order.map { "\(q($0)) IS NULL, \(q($0)), " } ?? ""
                sql = "SELECT \(q("Z_PK")), \(q("Z_ENT")) FROM \(q(table)) WHERE \(q(column)) = ? ORDER BY \(ordering)\(q("Z_PK"))"
            case .joinTable(let table, let source, let destination, let order):
                guard let destinationTable = schema.table(for: field.destination)?.name else { return .none }
                let ordering = order.map { "j.\(q($0)) IS NULL, j.\(q($0)), " } ?? ""
                sql = "SELECT j.\(q(destination)), d.\(q("Z_ENT")) FROM \(q(table)) AS j JOIN \(q(destinationTable)) AS d ON d.\(q("Z_PK")) = j.\(q(destination)) WHERE j.\(q(source)) = ? ORDER BY \(ordering)j.\(q(destination))"
            default:
                return .none
            }
        } else if let i = entity.toOneIndex[relationship] {
            let field = entity.toOnes[i]
            fallback = field.destination
            guard let destinationTable = schema.table(for: field.destination)?.name else { return .none }
            sql = "SELECT d.\(q("Z_PK")), d.\(q("Z_ENT")) FROM \(q(entity.table)) AS s JOIN \(q(destinationTable)) AS d ON d.\(q("Z_PK")) = s.\(q(field.column)) WHERE s.\(q("Z_PK")) = ?"
        } else if schema.model.relationship(named: relationship, in: entity.name) != nil {
            return .none
        } else {
            return .unknown
        }
        let source = "SELECT \(q("Z_ENT")) FROM \(q(entity.table)) WHERE \(q("Z_PK")) = ?"
        return .read(source: compiler.dialect.statement(source), destinations: compiler.dialect.statement(sql), fallback: fallback)
    }
}
