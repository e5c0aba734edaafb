import Foundation
import StrataModel

/// Builds an ``SQLSchema``: numbers the entities (keeping the numbers a
/// store already gave them), then allocates tables, columns, join tables and
/// indexes in a fixed order (names sorted by UTF-8 bytes), so the same
/// model, entity list and existing numbers always give the same layout.
/// Table and index names never fall into the store's reserved names
/// (``SQLSchema/isReserved(_:)``).
struct SchemaLayout {
    typealias Column = SQLSchema.Column
    typealias Storage = SQLSchema.RelationshipStorage

    /// A property slot: the entity declaring it and its name.
    struct Slot: Hashable {
        var entity: String
        var name: String
    }

    let model: ObjectModel
    /// The numbers a store already gave its entities (none for a new store).
    let existingNumbers: [String: Int64]
    var held: [String] = []
    var tables: [SQLSchema.Table] = []
    var joinTables: [SQLSchema.JoinTable] = []
    var indexes: [SQLSchema.Index] = []
    var entityNumbers: [String: Int64] = [:]
    var tableIndexByEntity: [String: Int] = [:]
    var attributeColumns: [String: [String: String]] = [:]
    var relationshipStorages: [String: [String: Storage]] = [:]

    /// Lower-cased names of tables and indexes (one SQLite namespace).
    private var schemaNames: Set<String> = []
    /// Lower-cased column names per table index.
    private var columnNames: [Int: Set<String>] = [:]
    private var foreignKeyColumns: [Slot: (table: Int, column: String)] = [:]
    private var orderColumns: [Slot: (table: Int, column: String)] = [:]
    private var joinTableBySlot: [Slot: Int] = [:]

    init(model: ObjectModel, existingNumbers: [String: Int64]? = nil) {
        self.model = model
        self.existingNumbers = existingNumbers ?? [:]
    }

    static func byBytes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    mutating func build(entityNames: [String]) throws(StrataError) {
        var heldSet: Set<String> = []
        for name in entityNames {
            guard model.entity(named: name) != nil else {
                throw StrataError(.modelInvalid, "the store cannot hold unknown entity '\(name)'")
            }
            heldSet.insert(name)
        }
        held = heldSet.sorted(by: Self.byBytes)
        try numberEntities()

        let roots = Set(held.map { model.rootEntityName(of: $0) }).sorted(by: Self.byBytes)
        for root in roots { buildTable(root: root) }
        buildToManyStorage()
        try buildIndexes()
    }

    // MARK: - Entity numbers

    /// Held entities keep their existing numbers; the others get the next
    /// numbers above every existing one (a number is never given twice,
    /// even one of an entity no longer held), in name order. Throws
    /// ``StrataError/Code/invalidValue`` for existing numbers that are not
    /// positive or not distinct.
    private mutating func numberEntities() throws(StrataError) {
        var owners: [Int64: String] = [:]
        for name in existingNumbers.keys.sorted(by: Self.byBytes) {
            guard let number = existingNumbers[name] else { continue }
            guard number > 0 else {
                throw StrataError(.invalidValue, "entity '\(name)' has entity number \(number); entity numbers are positive")
            }
            if let other = owners.updateValue(name, forKey: number) {
                throw StrataError(.invalidValue, "entities '\(other)' and '\(name)' both have entity number \(number)")
            }
        }
        var last = existingNumbers.values.max() ?? 0
        for name in held {
            if let number = existingNumbers[name] {
                entityNumbers[name] = number
                continue
            }
            guard last < Int64.max else {
                throw StrataError(.invalidValue, "no entity number is left for entity '\(name)'")
            }
            last += 1
            entityNumbers[name] = last
        }
    }

    // MARK: - Names

    /// `name` moved out of the reserved `Z_STRATA_` namespace when it falls
    /// in it (`Z_STRATA_X` becomes `Z__STRATA_X`): no suffix could.
    private static func outsideReservedNamespace(_ name: String) -> String {
        guard name.lowercased().hasPrefix(SQLSchema.reservedPrefix.lowercased()) else { return name }
        let prefixLength = "Z_".count
        return String(name.prefix(prefixLength)) + "_" + String(name.dropFirst(prefixLength))
    }

    /// A table or index name: `base`, or `base_2`, `base_3`… when taken
    /// (case-insensitively) or reserved by the store.
    private mutating func allocateSchemaName(_ base: String) -> String {
        let base = Self.outsideReservedNamespace(base)
        var candidate = base
        var n = 2
        while schemaNames.contains(candidate.lowercased()) || SQLSchema.isReserved(candidate) {
            candidate = base + "_" + String(n)
            n += 1
        }
        schemaNames.insert(candidate.lowercased())
        return candidate
    }

    /// A column name of `table`: `base`, or `base_2`, `base_3`… when taken
    /// (case-insensitively); never in the reserved `Z_STRATA_` namespace
    /// (a migration renames columns through such names).
    private mutating func allocateColumn(_ base: String, in table: Int) -> String {
        let base = Self.outsideReservedNamespace(base)
        var taken = columnNames[table] ?? []
        var candidate = base
        var n = 2
        while taken.contains(candidate.lowercased()) {
            candidate = base + "_" + String(n)
            n += 1
        }
        taken.insert(candidate.lowercased())
        columnNames[table] = taken
        return candidate
    }

    private static func identifierPart(_ name: String) -> String {
        name.uppercased()
    }

    // MARK: - Tables

    /// The entity (in `entity`'s ancestry, root first) declaring an attribute.
    private func declaringEntity(ofAttribute name: String, in entity: String) -> String {
        for ancestor in model.ancestry(of: entity) {
            if model.entity(named: ancestor)?.attributes.contains(where: { $0.name == name }) == true { return ancestor }
        }
        return entity
    }

    /// The entity (in `entity`'s ancestry, root first) declaring a relationship.
    private func declaringEntity(ofRelationship name: String, in entity: String) -> String {
        for ancestor in model.ancestry(of: entity) {
            if model.entity(named: ancestor)?.relationships.contains(where: { $0.name == name }) == true { return ancestor }
        }
        return entity
    }

    private func depth(of entity: String) -> Int {
        model.ancestry(of: entity).count
    }

    private func slotOrder(_ a: Slot, _ b: Slot) -> Bool {
        let (da, db) = (depth(of: a.entity), depth(of: b.entity))
        if da != db { return da < db }
        if a.entity != b.entity { return Self.byBytes(a.entity, b.entity) }
        return Self.byBytes(a.name, b.name)
    }

    private mutating func buildTable(root: String) {
        let tableIndex = tables.count
        let name = allocateSchemaName("Z" + Self.identifierPart(root))
        let entities = held.filter { model.rootEntityName(of: $0) == root }
        columnNames[tableIndex] = ["z_pk", "z_ent", "z_opt"]
        var columns: [Column] = [
            Column(name: "Z_PK", sqlType: "INTEGER PRIMARY KEY", role: .primaryKey),
            Column(name: "Z_ENT", sqlType: "INTEGER NOT NULL", role: .entityNumber),
            Column(name: "Z_OPT", sqlType: "INTEGER NOT NULL", role: .version),
        ]

        // Attributes, one column per declaring slot.
        var attributeSlots: [Slot: AttributeDescription] = [:]
        for entity in entities {
            for attribute in model.attributes(of: entity) where attribute.isPersisted {
                let slot = Slot(entity: declaringEntity(ofAttribute: attribute.name, in: entity), name: attribute.name)
                if attributeSlots[slot] == nil { attributeSlots[slot] = attribute }
            }
        }
        var slotColumns: [Slot: String] = [:]
        for slot in attributeSlots.keys.sorted(by: slotOrder) {
            guard let attribute = attributeSlots[slot] else { continue }
            let column = allocateColumn("Z" + Self.identifierPart(slot.name), in: tableIndex)
            slotColumns[slot] = column
            columns.append(Column(name: column, sqlType: Self.sqlType(of: attribute.type), role: .attribute(entity: slot.entity, name: slot.name)))
        }
        for entity in entities {
            var map: [String: String] = [:]
            for attribute in model.attributes(of: entity) where attribute.isPersisted {
                let slot = Slot(entity: declaringEntity(ofAttribute: attribute.name, in: entity), name: attribute.name)
                map[attribute.name] = slotColumns[slot]
            }
            attributeColumns[entity] = map
        }

        // To-one foreign keys.
        var toOneSlots: Set<Slot> = []
        for entity in entities {
            for relationship in model.relationships(of: entity) where !relationship.isTransient && !relationship.isToMany {
                toOneSlots.insert(Slot(entity: declaringEntity(ofRelationship: relationship.name, in: entity), name: relationship.name))
            }
        }
        for slot in toOneSlots.sorted(by: slotOrder) {
            let column = allocateColumn("Z" + Self.identifierPart(slot.name), in: tableIndex)
            foreignKeyColumns[slot] = (tableIndex, column)
            columns.append(Column(name: column, sqlType: "INTEGER", role: .foreignKey(entity: slot.entity, name: slot.name)))
        }

        for entity in entities { tableIndexByEntity[entity] = tableIndex }
        tables.append(SQLSchema.Table(name: name, rootEntity: root, entities: entities, columns: columns))
    }

    /// The SQL type of an attribute type's column.
    static func sqlType(of type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .double, .float, .date: "REAL"
        case .decimal, .string, .uri, .objectID: "TEXT"
        case .binary, .transformable, .uuid, .undefined, .composite: "BLOB"
        }
    }

    // MARK: - Relationships

    private mutating func buildToManyStorage() {
        for entity in held {
            var map: [String: Storage] = [:]
            let relationships = model.relationships(of: entity).sorted { Self.byBytes($0.name, $1.name) }
            for relationship in relationships {
                map[relationship.name] = storage(of: relationship, in: entity)
            }
            relationshipStorages[entity] = map
        }
    }

    private mutating func storage(of relationship: RelationshipDescription, in entity: String) -> Storage {
        if relationship.isTransient { return .transient }
        let slot = Slot(entity: declaringEntity(ofRelationship: relationship.name, in: entity), name: relationship.name)
        if !relationship.isToMany {
            guard let fk = foreignKeyColumns[slot] else { return .external }
            return .foreignKey(table: tables[fk.table].name, column: fk.column)
        }
        let destination = relationship.destinationEntityName
        guard tableIndexByEntity[destination] != nil else { return .external }
        let inverse = model.inverse(of: relationship).flatMap { $0.isTransient ? nil : $0 }
        let inverseSlot = inverse.map { Slot(entity: declaringEntity(ofRelationship: $0.name, in: destination), name: $0.name) }

        // To-many read through its inverse to-one's foreign key.
        if let inverse, let inverseSlot, !inverse.isToMany, let fk = foreignKeyColumns[inverseSlot] {
            var order: String?
            if relationship.isOrdered {
                if let existing = orderColumns[slot] {
                    order = existing.column
                } else {
                    let column = allocateColumn("Z_FOK_" + Self.identifierPart(inverse.name), in: fk.table)
                    orderColumns[slot] = (fk.table, column)
                    tables[fk.table].columns.append(Column(name: column, sqlType: "INTEGER", role: .order(entity: slot.entity, name: slot.name)))
                    order = column
                }
            }
            return .inverseForeignKey(table: tables[fk.table].name, column: fk.column, orderColumn: order)
        }

        // Many-to-many pair: one shared join table owned by the smaller slot.
        if let inverse, let inverseSlot, inverse.isToMany, inverse.inverseName == relationship.name, inverseSlot != slot {
            let ownerIsSelf = slotOrder(slot, inverseSlot)
            let owner = ownerIsSelf ? slot : inverseSlot
            let ownerRelationship = ownerIsSelf ? relationship : inverse
            let other = ownerIsSelf ? inverse : relationship
            let join = joinTable(owner: owner, ordered: ownerRelationship.isOrdered, inverseOrdered: other.isOrdered)
            if ownerIsSelf {
                return .joinTable(table: join.name, sourceColumn: join.sourceColumn, destinationColumn: join.destinationColumn, orderColumn: join.orderColumn)
            }
            return .joinTable(table: join.name, sourceColumn: join.destinationColumn, destinationColumn: join.sourceColumn, orderColumn: join.inverseOrderColumn)
        }

        // No usable inverse (or its own inverse): a join table of its own.
        let join = joinTable(owner: slot, ordered: relationship.isOrdered, inverseOrdered: false)
        return .joinTable(table: join.name, sourceColumn: join.sourceColumn, destinationColumn: join.destinationColumn, orderColumn: join.orderColumn)
    }

    private mutating func joinTable(owner: Slot, ordered: Bool, inverseOrdered: Bool) -> SQLSchema.JoinTable {
        if let existing = joinTableBySlot[owner] { return joinTables[existing] }
        let name = allocateSchemaName("Z_" + Self.identifierPart(owner.entity) + "_" + Self.identifierPart(owner.name))
        let join = SQLSchema.JoinTable(
            name: name,
            entity: owner.entity,
            relationship: owner.name,
            sourceColumn: "Z_SOURCE",
            destinationColumn: "Z_TARGET",
            orderColumn: ordered ? "Z_ORDER" : nil,
            inverseOrderColumn: inverseOrdered ? "Z_INVERSE_ORDER" : nil
        )
        joinTableBySlot[owner] = joinTables.count
        joinTables.append(join)
        return join
    }

    // MARK: - Indexes

    private mutating func addIndex(table: String, suffix: String, elements: [SQLSchema.Index.Element], unique: Bool = false, entityNumbers: [Int64]? = nil) {
        let name = allocateSchemaName(table + "_" + suffix)
        indexes.append(SQLSchema.Index(name: name, table: table, elements: elements, isUnique: unique, entityNumbers: entityNumbers))
    }

    private mutating func buildIndexes() throws(StrataError) {
        for table in tables {
            if table.entities.count > 1 || model.hierarchy(of: table.rootEntity).count > 1 {
                addIndex(table: table.name, suffix: "Z_ENT", elements: [.init(column: "Z_ENT", ascending: true)])
            }
            let orders: [String: String] = Dictionary(
                table.columns.compactMap { column -> (String, String)? in
                    guard case .order(let entity, let name) = column.role,
                          let relationship = model.relationship(named: name, in: entity),
                          let inverse = model.inverse(of: relationship),
                          let fk = foreignKeyColumns[Slot(entity: declaringEntity(ofRelationship: inverse.name, in: relationship.destinationEntityName), name: inverse.name)]
                    else { return nil }
                    return (fk.column, column.name)
                },
                uniquingKeysWith: { a, _ in a }
            )
            for column in table.columns {
                switch column.role {
                case .foreignKey:
                    var elements: [SQLSchema.Index.Element] = [.init(column: column.name, ascending: true)]
                    if let order = orders[column.name] { elements.append(.init(column: order, ascending: true)) }
                    addIndex(table: table.name, suffix: column.name, elements: elements)
                case .attribute(let entity, let name):
                    if model.attribute(named: name, in: entity)?.isIndexed == true {
                        addIndex(table: table.name, suffix: column.name, elements: [.init(column: column.name, ascending: true)])
                    }
                default:
                    break
                }
            }
        }
        for join in joinTables {
            var elements: [SQLSchema.Index.Element] = [.init(column: join.destinationColumn, ascending: true)]
            if let order = join.inverseOrderColumn { elements.append(.init(column: order, ascending: true)) }
            addIndex(table: join.name, suffix: join.destinationColumn, elements: elements)
        }
        for entity in held {
            guard let description = model.entity(named: entity), let tableIndex = tableIndexByEntity[entity] else { continue }
            let table = tables[tableIndex]
            for fetchIndex in description.fetchIndexes {
                var elements: [SQLSchema.Index.Element] = []
                for element in fetchIndex.elements {
                    elements.append(.init(column: try column(for: element.property, in: entity, purpose: "fetch index '\(fetchIndex.name)'"), ascending: element.ascending))
                }
                guard !elements.isEmpty else { continue }
                addIndex(table: table.name, suffix: Self.identifierPart(fetchIndex.name), elements: elements)
            }
            for constraint in description.uniquenessConstraints where !constraint.isEmpty {
                var elements: [SQLSchema.Index.Element] = []
                for property in constraint {
                    elements.append(.init(column: try column(for: property, in: entity, purpose: "uniqueness constraint"), ascending: true))
                }
                let covered = model.hierarchy(of: entity).filter { tableIndexByEntity[$0] != nil }
                let numbers: [Int64]? = Set(covered) == Set(table.entities)
                    ? nil
                    : covered.compactMap { entityNumbers[$0] }.sorted()
                let suffix = "UNIQUE_" + Self.identifierPart(entity) + "_" + constraint.map(Self.identifierPart).joined(separator: "_")
                addIndex(table: table.name, suffix: suffix, elements: elements, unique: true, entityNumbers: numbers)
            }
        }
    }

    /// The column of an attribute or to-one relationship, for indexes.
    private func column(for property: String, in entity: String, purpose: String) throws(StrataError) -> String {
        if let column = attributeColumns[entity]?[property] { return column }
        if let relationship = model.relationship(named: property, in: entity), !relationship.isToMany,
           let fk = foreignKeyColumns[Slot(entity: declaringEntity(ofRelationship: property, in: entity), name: property)] {
            return fk.column
        }
        throw StrataError(.modelInvalid, "\(purpose) of '\(entity)' names '\(property)', which is not a persisted attribute or to-one relationship")
    }
}
