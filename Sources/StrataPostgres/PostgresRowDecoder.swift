import Logging
import PostgresNIO
import StrataModel
import StrataQuery
import StrataStore

/// Turns rows of a hierarchy table, read with the table's columns in
/// ``SQLSchema/Table/columns`` order (what ``SQLQueryCompiler/rowQuery(_:)``
/// and ``selectList(_:)`` select), into ``Snapshot``s, as the SQLite
/// store's decoder does: a row's entity is its `Z_ENT`; its snapshot holds
/// every persisted attribute and to-one of that entity; the entity of a
/// to-one destination whose declared entity has subentities in the same
/// table is read from the destinations' `Z_ENT`s after the rows, on the
/// same connection.
final class PostgresRowDecoder: Sendable {
    private struct BoundAttribute: Sendable {
        var name: String
        var column: Int
        var slot: Int
        var type: AttributeType
    }

    private struct BoundToOne: Sendable {
        var name: String
        var column: Int
        var slot: Int
        var field: PostgresStoreMapping.ToOneField
    }

    private struct BoundEntity: Sendable {
        var name: String
        var template: PropertyValues
        var attributes: [BoundAttribute]
        var toOnes: [BoundToOne]
    }

    /// One table's columns and entities.
    private struct TablePlan: Sendable {
        var key: Int
        var entity: Int
        var version: Int
        var entities: [Int64: BoundEntity]
        var selectList: String
    }

    private struct PendingDestination {
        var snapshot: Int
        var name: String
        var table: String
        var declared: String
        var key: Int64
    }

    let mapping: PostgresStoreMapping
    let storeIdentifier: String
    /// The store, for messages.
    let place: String
    private let plans: [String: TablePlan]

    init(mapping: PostgresStoreMapping, storeIdentifier: String, place: String) {
        self.mapping = mapping
        self.storeIdentifier = storeIdentifier
        self.place = place
        var plans: [String: TablePlan] = [:]
        for table in mapping.schema.tables {
            var index: [String: Int] = [:]
            for (i, column) in table.columns.enumerated() { index[column.name] = i }
            var entities: [Int64: BoundEntity] = [:]
            for name in table.entities {
                guard let entity = mapping.entities[name] else { continue }
                let template = entity.snapshotTemplate
                entities[entity.number] = BoundEntity(
                    name: name,
                    template: template,
                    attributes: entity.attributes.compactMap { field in
                        guard let column = index[field.column], let slot = template.layout.slot(of: field.name) else { return nil }
                        return BoundAttribute(name: field.name, column: column, slot: slot, type: field.type)
                    },
                    toOnes: entity.toOnes.compactMap { field in
                        guard let column = index[field.column], let slot = template.layout.slot(of: field.name) else { return nil }
                        return BoundToOne(name: field.name, column: column, slot: slot, field: field)
                    }
                )
            }
            plans[table.name] = TablePlan(
                key: index["Z_PK"] ?? 0, entity: index["Z_ENT"] ?? 1, version: index["Z_OPT"] ?? 2, entities: entities,
                selectList: table.columns.map { SQLSchema.quote($0.name) }.joined(separator: ", ")
            )
        }
        self.plans = plans
    }

    /// The table's columns, in the order the decoder reads them.
    func selectList(_ table: String) -> String {
        plans[table]?.selectList ?? "*"
    }

    /// Whether rows of `table` decode with no statement but their own.
    func decodesInOneStatement(table: String) -> Bool {
        mapping.tablesDecodedInOneStatement.contains(table)
    }

    /// The snapshots of `rows` (whole rows of `table`), in order, their
    /// destinations' entities looked up through `connection`.
    func snapshots(_ rows: PostgresRowSequence, table: String, connection: PostgresConnection?, logger: Logger) async throws -> [Snapshot] {
        guard let plan = plans[table] else {
            throw StrataError(.storeOpen, "\(place): no table \(table) in the store's schema")
        }
        var result: [Snapshot] = []
        var pending: [PendingDestination] = []
        let identifier = storeIdentifier
        for try await row in rows {
            let cells = PostgresRandomAccessRow(row)
            let key = try integer(cells[plan.key], table: table)
            let number = try integer(cells[plan.entity], table: table)
            let version = try integer(cells[plan.version], table: table)
            guard let entity = plan.entities[number] else {
                throw StrataError(.storeOpen, "\(place): row \(key) of \(table) has entity number \(number), which is not an entity of this store")
            }
            var values = PropertyValues(layout: entity.template.layout, repeating: .null)
            for attribute in entity.attributes {
                do {
                    let value = try PostgresValueCoding.propertyValue(from: cells[attribute.column], type: attribute.type)
                    if !value.isNull { values[slot: attribute.slot] = value }
                } catch {
                    throw StrataError(.invalidValue, "\(place): \(entity.name).\(attribute.name) of row \(key): \(error.message)")
                }
            }
            for toOne in entity.toOnes {
                let cell = cells[toOne.column]
                guard cell.bytes != nil else { continue }
                let destination = try integer(cell, table: table)
                switch toOne.field.resolution {
                case .fixed(let name), .external(let name):
                    values[slot: toOne.slot] = .object(ObjectID(storeIdentifier: identifier, entityName: name, key: .permanent(destination)))
                case .lookup(let destinationTable, let declared):
                    values[slot: toOne.slot] = .object(ObjectID(storeIdentifier: identifier, entityName: declared, key: .permanent(destination)))
                    pending.append(PendingDestination(snapshot: result.count, name: toOne.name, table: destinationTable, declared: declared, key: destination))
                }
            }
            result.append(Snapshot(objectID: ObjectID(storeIdentifier: identifier, entityName: entity.name, key: .permanent(key)), version: version, values: values))
        }
        if !pending.isEmpty {
            guard let connection else {
                throw StrataError(.storeOpen, "\(place): rows of \(table) need their destinations' entities and no connection was given")
            }
            var keysByTable: [String: Set<Int64>] = [:]
            for item in pending { keysByTable[item.table, default: []].insert(item.key) }
            var names: [String: [Int64: String]] = [:]
            for (destinationTable, keys) in keysByTable {
                names[destinationTable] = try await entityNames(connection, table: destinationTable, keys: Array(keys), logger: logger)
            }
            for item in pending {
                guard let name = names[item.table]?[item.key], name != item.declared else { continue }
                result[item.snapshot].values[item.name] = .object(ObjectID(storeIdentifier: identifier, entityName: name, key: .permanent(item.key)))
            }
        }
        return result
    }

    /// The entity of each of these rows of `table` that exists, by key.
    func entityNames(_ connection: PostgresConnection, table: String, keys: [Int64], logger: Logger) async throws -> [Int64: String] {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(keys)
        let q = SQLSchema.quote
        let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(q("Z_PK")), \(q("Z_ENT")) FROM \(q(table)) WHERE \(q("Z_PK")) = ANY($1)", binds: bindings), logger: logger)
        var names: [Int64: String] = [:]
        for try await (key, number) in rows.decode((Int64, Int64).self) {
            if let name = mapping.entitiesByNumber[number]?.name { names[key] = name }
        }
        return names
    }

    /// IDs of rows read as (`Z_PK`, `Z_ENT`), in order; a number that is
    /// no entity of the store is `fallbackEntity`.
    func objectIDs(_ rows: PostgresRowSequence, fallbackEntity: String) async throws -> [ObjectID] {
        var ids: [ObjectID] = []
        for try await (key, number) in rows.decode((Int64, Int64).self) {
            ids.append(ObjectID(storeIdentifier: storeIdentifier, entityName: mapping.entitiesByNumber[number]?.name ?? fallbackEntity, key: .permanent(key)))
        }
        return ids
    }

    private func integer(_ cell: PostgresCell, table: String) throws -> Int64 {
        do {
            return try cell.decode(Int64.self)
        } catch {
            throw StrataError(.storeOpen, "\(place): column \(cell.columnName) of \(table) does not hold an integer")
        }
    }
}
