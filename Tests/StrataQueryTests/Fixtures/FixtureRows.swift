import StrataModel
@testable import StrataQuery

/// The fixture graph as rows of a SQL store's tables (``SQLSchema``'s
/// layout), in the stored form of ``SQLValueCoding``: what both the SQLite
/// and the PostgreSQL fixtures insert.
enum FixtureRows {
    /// One row: its table and its cells.
    struct Row {
        var table: String
        var cells: [(column: String, value: SQLValue)]
    }

    /// The rows of every record, then of every join table.
    static func rows(_ data: FixtureData, layout: SQLSchema, model: ObjectModel) -> [Row] {
        var rows: [Row] = []
        for record in data.records {
            guard let table = layout.table(for: record.entity) else { continue }
            var cells: [(column: String, value: SQLValue)] = []
            for column in table.columns {
                let value: SQLValue
                switch column.role {
                case .primaryKey: value = .integer(record.primaryKey)
                case .entityNumber: value = .integer(Int64(layout.entityNumber(of: record.entity) ?? 0))
                case .version: value = .integer(1)
                case .attribute(_, let name):
                    guard layout.column(forAttribute: name, in: record.entity) == column.name else { continue }
                    value = SQLValueCoding.sqlValue(for: record[name])
                case .foreignKey(_, let name):
                    guard case .foreignKey(_, let fk)? = layout.storage(ofRelationship: name, in: record.entity), fk == column.name else { continue }
                    value = data.one(record, name).map { .integer($0.primaryKey) } ?? .null
                case .order(let entity, let name):
                    // This row's position among its owner's ordered destinations.
                    guard let relationship = model.relationship(named: name, in: entity),
                          let inverse = relationship.inverseName,
                          let ownerIndex = record.toOne[inverse],
                          let position = (data.records[ownerIndex].toMany[name] ?? []).firstIndex(where: { data.records[$0].primaryKey == record.primaryKey && data.records[$0].entity == record.entity })
                    else { continue }
                    value = .integer(Int64(position))
                }
                cells.append((column.name, value))
            }
            rows.append(Row(table: table.name, cells: cells))
        }
        for join in layout.joinTables {
            for record in data.all(join.entity) {
                for (position, destination) in data.many(record, join.relationship).enumerated() {
                    var cells: [(column: String, value: SQLValue)] = [
                        (join.sourceColumn, .integer(record.primaryKey)),
                        (join.destinationColumn, .integer(destination.primaryKey)),
                    ]
                    if let order = join.orderColumn {
                        cells.append((order, .integer(Int64(position))))
                    }
                    if let inverseOrder = join.inverseOrderColumn,
                       let inverse = model.relationship(named: join.relationship, in: join.entity)?.inverseName {
                        let back = data.many(destination, inverse).firstIndex { $0.primaryKey == record.primaryKey } ?? 0
                        cells.append((inverseOrder, .integer(Int64(back))))
                    }
                    rows.append(Row(table: join.name, cells: cells))
                }
            }
        }
        return rows
    }
}
