import Foundation
import GRDB
import StrataModel
import StrataStore
import StrataQuery

extension SQLiteSaveTransaction {
    // MARK: - Uniqueness constraints

    /// Finds which uniqueness constraint the row broke, with the clashing
    /// values and the object already holding them, and records it.
    mutating func recordConstraintConflict(_ db: Database, entity: Entity, objectID: ObjectID, key: Int64, written: [String: DatabaseValue], error: DatabaseError) throws {
        var current: Row?
        var loadedCurrent = false
        for declaring in model.ancestry(of: entity.name) {
            for constraint in model.entity(named: declaring)?.uniquenessConstraints ?? [] where !constraint.isEmpty {
                var columns: [String] = []
                for property in constraint {
                    if let column = mapping.schema.column(forAttribute: property, in: entity.name) {
                        columns.append(column)
                    } else if let i = entity.toOneIndex[property] {
                        columns.append(entity.toOnes[i].column)
                    }
                }
                guard columns.count == constraint.count else { continue }
                var values: [DatabaseValue] = []
                for column in columns {
                    if let value = written[column] {
                        values.append(value)
                        continue
                    }
                    if !loadedCurrent {
                        current = try Row.fetchOne(db, sql: "SELECT * FROM \(Self.q(entity.table)) WHERE \(Self.q("Z_PK")) = ?", arguments: [key])
                        loadedCurrent = true
                    }
                    values.append(current?[column] as DatabaseValue? ?? .null)
                }
                guard !values.contains(where: \.isNull) else { continue }
                let numbers = mapping.schema.entities(covering: declaring, includingSubentities: true).compactMap { mapping.schema.entityNumber(of: $0) }
                var sql = "SELECT \(Self.q("Z_PK")), \(Self.q("Z_ENT")) FROM \(Self.q(entity.table)) WHERE "
                sql += columns.map { "\(Self.q($0)) = ?" }.joined(separator: " AND ")
                sql += " AND \(Self.q("Z_PK")) <> ? AND \(Self.q("Z_ENT")) IN (" + SQLiteRowDecoder.placeholders(numbers.count) + ") LIMIT 1"
                let arguments = StatementArguments(values + [key.databaseValue] + numbers.map(\.databaseValue))
                guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) else { continue }
                let existingKey = try row.decode(Int64.self, atIndex: 0)
                let existingNumber = try row.decode(Int64.self, atIndex: 1)
                // The saved object holding the values; nil when it is
                // another insert of this save (nothing saved holds them).
                let existing: ObjectID? = temporary(table: entity.table, key: existingKey) != nil
                    ? nil
                    : ObjectID(storeIdentifier: storeIdentifier, entityName: mapping.entitiesByNumber[existingNumber]?.name ?? entity.name, key: .permanent(existingKey))
                var described: [String: PropertyValue] = [:]
                for (property, value) in zip(constraint, values) {
                    described[property] = try describe(db, property: property, value: value, entity: entity)
                }
                constraintConflicts.append(ConstraintConflict(entityName: declaring, constraint: constraint, values: described, objectID: objectID, existingObjectID: existing))
                return
            }
        }
        throw StrataError(.storeSave, "store \(path): \(objectID) breaks a uniqueness constraint that could not be identified: \(error.message ?? "\(error)")")
    }

    /// The temporary ID of the insert of this save that got `key` in `table`.
    mutating func temporary(table: String, key: Int64) -> ObjectID? {
        if temporaryByKey == nil {
            var map: [String: [Int64: ObjectID]] = [:]
            for insert in inserts { map[insert.entity.table, default: [:]][insert.key] = insert.objectID }
            temporaryByKey = map
        }
        return temporaryByKey?[table]?[key]
    }

    /// A stored constraint value as a property value.
    mutating func describe(_ db: Database, property: String, value: DatabaseValue, entity: Entity) throws -> PropertyValue {
        if let i = entity.attributeIndex[property] {
            return try SQLiteRowDecoder.propertyValue(value, type: entity.attributes[i].type)
        }
        guard let i = entity.toOneIndex[property], case .int64(let key) = value.storage else { return .null }
        let field = entity.toOnes[i]
        guard let table = mapping.schema.table(for: field.destination)?.name else { return .null }
        if let temporary = temporary(table: table, key: key) { return .object(temporary) }
        let name = try decoder.entityNames(db, table: table, keys: [key])[key] ?? field.destination
        return .object(ObjectID(storeIdentifier: storeIdentifier, entityName: name, key: .permanent(key)))
    }
}
