import Foundation
import Logging
import PostgresNIO
import StrataModel
import StrataQuery
import StrataStore

extension PostgresSaveTransaction {
    // MARK: - The transaction

    /// Writes the change set inside the caller's transaction on
    /// `connection`, its inserts' keys already given (``assignKeys(_:)``);
    /// the caller rolls back unless the answer is `.committed`.
    mutating func execute(_ connection: PostgresConnection, logger: Logger) async throws -> StoreSaveResult {
        let runner = PostgresStatementRunner(connection: connection, logger: logger)
        if changes.checksVersions, let conflicts = try await versionConflicts(runner), !conflicts.isEmpty {
            return .conflicts(conflicts)
        }
        try await checkGuards(runner, phase: .before)

        var commit = StoreCommit()
        // To-manys through an inverse foreign key: inserted destinations get
        // their key and order in their own INSERT; the others are queued.
        var releases: [(table: String, column: String, order: String?, source: Int64)] = []
        var assignments: [(table: String, column: String, order: String?, destination: ObjectID, key: Int64, source: Int64, position: Int)] = []
        var joins: [(join: SQLSchema.JoinTable, sourceColumn: String, destinationColumn: String, order: String?, source: Int64, destinations: [Int64], isNew: Bool)] = []
        for item in toManys {
            let source = item.insert.map { inserts[$0].key } ?? item.sourceKey
            switch item.field.storage {
            case .inverseForeignKey(let table, let column, let order):
                if item.insert == nil { releases.append((table, column, order, source)) }
                for (position, destination) in item.destinations.enumerated() {
                    if let i = insertIndex[destination], inserts[i].entity.table == table,
                       let fk = inserts[i].entity.insertPosition[column],
                       order == nil || order.flatMap({ inserts[i].entity.insertPosition[$0] }) != nil {
                        // A to-one naming an insert wins over a to-many's
                        // inverse for the same column (an inconsistent change set).
                        if !inserts[i].references.contains(where: { $0.position == fk }) { inserts[i].cells[fk] = .integer(source) }
                        if let order, let o = inserts[i].entity.insertPosition[order] { inserts[i].cells[o] = .integer(Int64(position)) }
                    } else {
                        assignments.append((table, column, order, destination, try key(of: destination), source, position))
                    }
                }
            case .joinTable(let table, let sourceColumn, let destinationColumn, let order):
                guard let join = mapping.joinTables[table] else {
                    throw StrataError(.storeSave, "\(place): join table \(table) is not in the schema")
                }
                var keys: [Int64] = []
                keys.reserveCapacity(item.destinations.count)
                for destination in item.destinations { keys.append(try key(of: destination)) }
                joins.append((join, sourceColumn, destinationColumn, order, source, keys, item.insert != nil))
            default:
                break
            }
        }

        try await readTombstones(runner)

        // Deletes, per table, and the join-table rows naming them.
        var deletedByTable: [String: [Int64]] = [:]
        for delete in deletes { deletedByTable[delete.entity.table, default: []].append(delete.key) }
        for (table, keys) in deletedByTable.sorted(by: { $0.key < $1.key }) {
            try await runner.run("DELETE FROM \(Self.q(table)) WHERE \(Self.q("Z_PK")) = ANY($1)", keys: keys)
            for reference in mapping.joinReferences[table] ?? [] {
                try await runner.run("DELETE FROM \(Self.q(reference.table)) WHERE \(Self.q(reference.column)) = ANY($1)", keys: keys)
            }
        }

        // Updates (noting those whose row was already gone), then the saved
        // objects the save points to must exist.
        var missingUpdates: Set<Int> = []
        for index in updates.indices {
            let update = updates[index]
            var values: [SQLValue] = []
            var sql = "UPDATE \(Self.q(update.entity.table)) SET "
            for assignment in update.assignments {
                var value = assignment.value
                if let target = assignment.reference { value = .integer(try key(of: target)) }
                values.append(value)
                sql += "\(Self.q(assignment.column)) = $\(values.count), "
                if let companions = update.entity.extras.companionColumns[assignment.column] {
                    for (column, companion) in zip(companions, PostgresCompanion.values(value)) {
                        values.append(companion)
                        sql += "\(Self.q(column)) = $\(values.count), "
                    }
                }
            }
            values.append(.integer(update.key))
            sql += "\(Self.q("Z_OPT")) = \(Self.q("Z_OPT")) + 1 WHERE \(Self.q("Z_PK")) = $\(values.count) RETURNING \(Self.q("Z_OPT"))"
            let constrained = constrainedColumns(of: update.entity)
            let mayConflict = update.assignments.contains { constrained.contains($0.column) }
            guard let rows = try await runner.run(sql, values, mayConflict: mayConflict) else {
                var written: [String: SQLValue] = [:]
                for assignment in update.assignments {
                    written[assignment.column] = try assignment.reference.map { .integer(try key(of: $0)) } ?? assignment.value
                }
                try await recordConstraintConflict(runner, entity: update.entity, objectID: update.objectID, key: update.key, written: written, readsCurrent: true)
                continue
            }
            if let version = rows.first?.first {
                commit.updatedVersions[update.objectID] = try version.decode(Int64.self)
            } else {
                missingUpdates.insert(index)
            }
        }
        try await checkSavedTargets(runner, missingUpdates: missingUpdates)

        // Destinations released by updated to-manys.
        for release in releases {
            var sql = "UPDATE \(Self.q(release.table)) SET \(Self.q(release.column)) = NULL"
            if let order = release.order { sql += ", \(Self.q(order)) = NULL" }
            sql += " WHERE \(Self.q(release.column)) = $1"
            _ = try await runner.run(sql, [.integer(release.source)])
        }

        try await insertRows(runner)
        if constraintConflicts.isEmpty {
            commit.temporaryIDs = inserts.map(\.objectID)
            commit.insertedIDs = inserts.map { ObjectID(storeIdentifier: storeIdentifier, entityName: $0.entity.name, key: .permanent($0.key)) }
        }

        // Existing destinations of inverse-foreign-key to-manys, then join tables.
        for assignment in assignments {
            var sql = "UPDATE \(Self.q(assignment.table)) SET \(Self.q(assignment.column)) = $1"
            var values: [SQLValue] = [.integer(assignment.source)]
            if let order = assignment.order {
                values.append(.integer(Int64(assignment.position)))
                sql += ", \(Self.q(order)) = $2"
            }
            values.append(.integer(assignment.key))
            sql += " WHERE \(Self.q("Z_PK")) = $\(values.count)"
            let destination = mapping.entities[assignment.destination.entityName]
            let mayConflict = destination.map { constrainedColumns(of: $0).contains(assignment.column) } ?? false
            if try await runner.run(sql, values, mayConflict: mayConflict) == nil, let destination {
                var written: [String: SQLValue] = [assignment.column: .integer(assignment.source)]
                if let order = assignment.order { written[order] = .integer(Int64(assignment.position)) }
                try await recordConstraintConflict(runner, entity: destination, objectID: assignment.destination, key: assignment.key, written: written, readsCurrent: true)
            }
        }
        for join in joins {
            try await writeJoin(runner, join: join.join, sourceColumn: join.sourceColumn, destinationColumn: join.destinationColumn,
                                order: join.order, source: join.source, destinations: join.destinations, isNew: join.isNew)
        }

        if !constraintConflicts.isEmpty { return .constraintConflicts(constraintConflicts) }
        try await checkGuards(runner, phase: .after)
        return .committed(commit)
    }

    /// Reads the preserved-after-deletion attributes of the objects the
    /// save deletes (none read when no deleted entity preserves any).
    mutating func readTombstones(_ runner: PostgresStatementRunner) async throws {
        for (index, delete) in deletes.enumerated() {
            let preserved = delete.entity.attributes.compactMap { field in
                model.attribute(named: field.name, in: delete.entity.name).flatMap { $0.preserveAfterDeletion ? field : nil }
            }
            guard !preserved.isEmpty, let snapshot = try await runner.snapshots(decoder, table: delete.entity.table, keys: [delete.key]).first else { continue }
            tombstones[index] = preserved.compactMap { field in
                let value = snapshot[field.name]
                return value.isNull ? nil : (field.name, field.type, value)
            }
        }
    }

    /// The columns of `entity`'s uniqueness constraints (its own and its
    /// ancestors').
    func constrainedColumns(of entity: Entity) -> Set<String> {
        var columns: Set<String> = []
        for declaring in model.ancestry(of: entity.name) {
            for constraint in model.entity(named: declaring)?.uniquenessConstraints ?? [] {
                for property in constraint {
                    if let i = entity.attributeIndex[property] { columns.insert(entity.attributes[i].column) }
                    if let i = entity.toOneIndex[property] { columns.insert(entity.toOnes[i].column) }
                }
            }
        }
        return columns
    }

    // MARK: - Steps

    /// Every update or delete whose row is missing or at another version,
    /// with the row's current snapshot; the rows are locked until the
    /// commit. Nil when the save changes no saved object.
    func versionConflicts(_ runner: PostgresStatementRunner) async throws -> [StoreConflict]? {
        struct Expectation {
            var objectID: ObjectID
            var key: Int64
            var version: Int64
            var deletes: Bool
        }
        var byTable: [String: [Expectation]] = [:]
        for update in updates {
            byTable[update.entity.table, default: []].append(Expectation(objectID: update.objectID, key: update.key, version: update.expectedVersion, deletes: false))
        }
        for delete in deletes {
            byTable[delete.entity.table, default: []].append(Expectation(objectID: delete.objectID, key: delete.key, version: delete.expectedVersion, deletes: true))
        }
        guard !byTable.isEmpty else { return nil }
        var conflicts: [StoreConflict] = []
        for (table, expectations) in byTable.sorted(by: { $0.key < $1.key }) {
            var current: [Int64: Int64] = [:]
            // Rows to delete locked FOR UPDATE; rows to update FOR NO KEY
            // UPDATE, which does not block another save's FOR KEY SHARE of
            // the same row (a reference to it).
            let deleted = Set(expectations.filter(\.deletes).map(\.key))
            let updated = Set(expectations.map(\.key)).subtracting(deleted)
            for (keys, lock) in [(deleted, "UPDATE"), (updated, "NO KEY UPDATE")] where !keys.isEmpty {
                let sql = "SELECT \(Self.q("Z_PK")), \(Self.q("Z_OPT")) FROM \(Self.q(table)) WHERE \(Self.q("Z_PK")) = ANY($1) ORDER BY \(Self.q("Z_PK")) FOR \(lock)"
                for row in try await runner.run(sql, keys: keys.sorted()) {
                    current[try row[0].decode(Int64.self)] = try row[1].decode(Int64.self)
                }
            }
            let stale = expectations.filter { current[$0.key] != $0.version }
            guard !stale.isEmpty else { continue }
            let present = stale.compactMap { current[$0.key] == nil ? nil : $0.key }
            var snapshots: [Int64: Snapshot] = [:]
            if !present.isEmpty {
                for snapshot in try await runner.snapshots(decoder, table: table, keys: present) {
                    if let key = snapshot.objectID.primaryKey { snapshots[key] = snapshot }
                }
            }
            for expectation in stale {
                conflicts.append(StoreConflict(objectID: expectation.objectID, expectedVersion: expectation.version,
                                               currentVersion: current[expectation.key] ?? 0, currentSnapshot: snapshots[expectation.key]))
            }
        }
        return conflicts
    }

    /// How many keys the inserts need, by hierarchy table.
    var keyCounts: [String: Int64] {
        var counts: [String: Int64] = [:]
        for insert in inserts { counts[insert.entity.table, default: 0] += 1 }
        return counts
    }

    /// Gives the inserts their keys from `next` (the next free key of
    /// each hierarchy table, allocated for the whole group before any save
    /// takes a row lock), advancing it.
    mutating func assignKeys(_ next: inout [String: Int64]) {
        for i in inserts.indices {
            let table = inserts[i].entity.table
            let key = next[table] ?? 0
            inserts[i].key = key
            inserts[i].cells[0] = .integer(key)
            next[table] = key + 1
        }
    }

    /// Reserves `counts` keys per hierarchy table from `Z_PRIMARYKEY`, in
    /// table order, inside the caller's transaction (the rows stay locked
    /// until its commit, so no key is handed out twice; keys of a save that
    /// rolls back are not handed out again). Answers each table's first key.
    static func reserveKeys(_ counts: [String: Int64], mapping: PostgresStoreMapping, runner: PostgresStatementRunner, place: String) async throws -> [String: Int64] {
        var next: [String: Int64] = [:]
        for (table, count) in counts.sorted(by: { $0.key < $1.key }) where count > 0 {
            guard let root = mapping.tables[table]?.rootEntity else { continue }
            let sql = "UPDATE \(q(SQLStoreMetadata.primaryKeyTableName)) SET \(q("Z_MAX")) = \(q("Z_MAX")) + $1 WHERE \(q("Z_NAME")) = $2 RETURNING \(q("Z_MAX"))"
            guard let highest = try await runner.run(sql, [.integer(count), .text(root)]).first?.first else {
                throw StrataError(.storeSave, "\(place): \(SQLStoreMetadata.primaryKeyTableName) has no row for \(root)")
            }
            next[table] = try highest.decode(Int64.self) - count + 1
        }
        return next
    }

    /// Fails with the first guard of `phase` (access rules) that some of
    /// its objects violate, as the transaction sees them now.
    func checkGuards(_ runner: PostgresStatementRunner, phase: StoreGuard.Phase) async throws {
        for guarded in changes.guards where guarded.phase == phase && !guarded.objectIDs.isEmpty {
            var ids: [ObjectID] = []
            ids.reserveCapacity(guarded.objectIDs.count)
            for id in guarded.objectIDs {
                guard id.isTemporary else {
                    ids.append(id)
                    continue
                }
                ids.append(ObjectID(storeIdentifier: storeIdentifier, entityName: id.entityName, key: .permanent(try key(of: id))))
            }
            let query = try mapping.compiler.countQuery(guarded.violations(among: ids))
            let rows = try await runner.run(query.sql, query.arguments)
            if let count = rows.first?.first, try count.decode(Int64.self) > 0 {
                throw guarded.denial
            }
        }
    }

    /// Throws 133000 when a saved object the inserts and (still existing)
    /// updates point to does not exist (or is a row of another entity),
    /// naming every such reference; the objects found are locked against
    /// deletion until the commit.
    func checkSavedTargets(_ runner: PostgresStatementRunner, missingUpdates: Set<Int>) async throws {
        let deleted = Set(deletes.map { "\($0.entity.table)/\($0.key)" })
        var targets = insertTargets
        for (index, update) in updates.enumerated() where !update.savedTargets.isEmpty {
            // An update whose row did not exist before the save checks nothing.
            if missingUpdates.contains(index), !deleted.contains("\(update.entity.table)/\(update.key)") { continue }
            targets += update.savedTargets
        }
        guard !targets.isEmpty else { return }
        var keysByTable: [String: Set<Int64>] = [:]
        for target in targets { keysByTable[target.table.name, default: []].insert(target.key) }
        var found: [String: [Int64: Int64]] = [:]
        for (table, keys) in keysByTable.sorted(by: { $0.key < $1.key }) {
            let sql = "SELECT \(Self.q("Z_PK")), \(Self.q("Z_ENT")) FROM \(Self.q(table)) WHERE \(Self.q("Z_PK")) = ANY($1) ORDER BY \(Self.q("Z_PK")) FOR KEY SHARE"
            var rows: [Int64: Int64] = [:]
            for row in try await runner.run(sql, keys: Array(keys)) {
                rows[try row[0].decode(Int64.self)] = try row[1].decode(Int64.self)
            }
            found[table.self] = rows
        }
        var dangling: [String] = []
        for target in targets {
            if let number = found[target.table.name]?[target.key] {
                if target.target.entityName == target.table.rootEntity { continue }
                if let actual = mapping.entitiesByNumber[number]?.name, model.isEntity(actual, kindOf: target.target.entityName) { continue }
            }
            dangling.append("\(target.source.entityName).\(target.property) of \(target.source) points to \(target.target), which no longer exists")
        }
        guard let first = dangling.first else { return }
        var message = "\(place): \(first)"
        if dangling.count > 1 { message += " (and \(dangling.count - 1) more reference(s) to objects that no longer exist)" }
        throw StrataError(.objectNotFound, message, details: Array(dangling.prefix(100)))
    }

    /// Inserts every row, runs of one entity in multi-row statements;
    /// rows a uniqueness constraint kept out are recorded as conflicts.
    mutating func insertRows(_ runner: PostgresStatementRunner) async throws {
        var start = 0
        while start < inserts.count {
            let entity = inserts[start].entity
            let width = entity.insertColumns.count + entity.extras.companionCellCount
            let rowsPerStatement = max(1, Self.maximumBindings / width)
            var end = start + 1
            while end < inserts.count, end - start < rowsPerStatement, inserts[end].entity === entity { end += 1 }
            var values: [SQLValue] = []
            values.reserveCapacity((end - start) * width)
            var sql = entity.extras.insertHead
            for i in start..<end {
                for reference in inserts[i].references {
                    inserts[i].cells[reference.position] = .integer(try key(of: reference.target))
                }
                sql += i == start ? "(" : ", ("
                for (position, cell) in inserts[i].cells.enumerated() {
                    values.append(cell)
                    sql += position == 0 ? "$\(values.count)" : position == 2 ? ", 1, $\(values.count)" : ", $\(values.count)"
                }
                if inserts[i].cells.count == 2 { sql += ", 1" }
                for position in entity.extras.textPositions {
                    for companion in PostgresCompanion.values(inserts[i].cells[position]) {
                        values.append(companion)
                        sql += ", $\(values.count)"
                    }
                }
                sql += ")"
            }
            sql += " ON CONFLICT DO NOTHING RETURNING \(Self.q("Z_PK"))"
            var written: Set<Int64> = []
            for row in try await runner.run(sql, values) { written.insert(try row[0].decode(Int64.self)) }
            if written.count != end - start {
                for i in start..<end where !written.contains(inserts[i].key) {
                    try await recordConstraintConflict(runner, entity: entity, objectID: inserts[i].objectID, key: inserts[i].key,
                                                       written: Dictionary(zip(entity.insertColumns, inserts[i].cells), uniquingKeysWith: { a, _ in a }), readsCurrent: false)
                }
            }
            start = end
        }
    }

    /// PostgreSQL's limit on a statement's parameters is 65,535; statements
    /// stay well below it.
    static let maximumBindings = 30_000

    /// Brings the join-table rows of one source to `destinations`.
    func writeJoin(_ runner: PostgresStatementRunner, join: SQLSchema.JoinTable, sourceColumn: String, destinationColumn: String,
                   order: String?, source: Int64, destinations: [Int64], isNew: Bool) async throws {
        let table = Self.q(join.name)
        if !isNew {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(source)
            bindings.append(destinations)
            _ = try await runner.run(PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE \(Self.q(sourceColumn)) = $1 AND NOT (\(Self.q(destinationColumn)) = ANY($2))", binds: bindings))
        }
        guard !destinations.isEmpty else { return }
        // Each destination once (the last position of one listed twice).
        var positions: [Int64: Int] = [:]
        for (position, destination) in destinations.enumerated() { positions[destination] = position }
        let unique = destinations.enumerated().filter { positions[$0.element] == $0.offset }
        let conflictTarget = "(\(Self.q(join.sourceColumn)), \(Self.q(join.destinationColumn)))"
        let perRow = order == nil ? 2 : 3
        var index = 0
        while index < unique.count {
            let chunk = unique[index..<min(unique.count, index + Self.maximumBindings / perRow)]
            index = chunk.endIndex
            var values: [SQLValue] = []
            var rows: [String] = []
            for (position, destination) in chunk {
                values.append(.integer(source))
                values.append(.integer(destination))
                if order != nil {
                    values.append(.integer(Int64(position)))
                    rows.append("($\(values.count - 2), $\(values.count - 1), $\(values.count))")
                } else {
                    rows.append("($\(values.count - 1), $\(values.count))")
                }
            }
            let sql: String
            if let order {
                sql = "INSERT INTO \(table) (\(Self.q(sourceColumn)), \(Self.q(destinationColumn)), \(Self.q(order))) VALUES \(rows.joined(separator: ", ")) ON CONFLICT \(conflictTarget) DO UPDATE SET \(Self.q(order)) = excluded.\(Self.q(order))"
            } else {
                sql = "INSERT INTO \(table) (\(Self.q(sourceColumn)), \(Self.q(destinationColumn))) VALUES \(rows.joined(separator: ", ")) ON CONFLICT DO NOTHING"
            }
            _ = try await runner.run(sql, values)
        }
    }

    // MARK: - Uniqueness constraints

    /// Finds which uniqueness constraint the object broke, with the
    /// clashing values and the saved object already holding them (none when
    /// it is another insert of this save), and records it. `written` are
    /// the cells the save wrote, by column (to-ones resolved to keys); the
    /// others are the row's current ones when `readsCurrent` (an update),
    /// else NULL (an insert).
    mutating func recordConstraintConflict(_ runner: PostgresStatementRunner, entity: Entity, objectID: ObjectID, key: Int64,
                                           written: [String: SQLValue], readsCurrent: Bool) async throws {
        var current: Snapshot?
        if readsCurrent {
            current = try await runner.snapshots(decoder, table: entity.table, keys: [key]).first
        }
        func stored(_ property: String, column: String) throws -> SQLValue {
            if let value = written[column] { return value }
            guard let value = current?[property] else { return .null }
            if let i = entity.attributeIndex[property] { return try checks.encode(value, field: entity.attributes[i], entity: entity.name) }
            if case .object(let target) = value, let targetKey = target.primaryKey { return .integer(targetKey) }
            return .null
        }
        for declaring in model.ancestry(of: entity.name) {
            for constraint in model.entity(named: declaring)?.uniquenessConstraints ?? [] where !constraint.isEmpty {
                var conditions: [String] = []
                var arguments: [SQLValue] = []
                var described: [String: PropertyValue] = [:]
                for property in constraint {
                    if let i = entity.attributeIndex[property] {
                        let value = try stored(property, column: entity.attributes[i].column)
                        arguments.append(value)
                        conditions.append("\(Self.q(entity.attributes[i].column)) = $\(arguments.count)")
                        described[property] = Self.propertyValue(value, type: entity.attributes[i].type)
                    } else if let i = entity.toOneIndex[property] {
                        let field = entity.toOnes[i]
                        let value = try stored(property, column: field.column)
                        arguments.append(value)
                        conditions.append("\(Self.q(field.column)) = $\(arguments.count)")
                        if case .integer(let targetKey) = value {
                            described[property] = .object(try await destinationID(runner, field: field, key: targetKey))
                        }
                    } else {
                        arguments.append(.null)
                    }
                }
                guard conditions.count == constraint.count, !arguments.contains(.null) else { continue }
                let numbers = mapping.schema.entities(covering: declaring, includingSubentities: true).compactMap { mapping.schema.entityNumber(of: $0) }
                arguments.append(.integer(key))
                var sql = "SELECT \(Self.q("Z_PK")), \(Self.q("Z_ENT")) FROM \(Self.q(entity.table)) WHERE " + conditions.joined(separator: " AND ")
                sql += " AND \(Self.q("Z_PK")) <> $\(arguments.count)"
                sql += " AND \(Self.q("Z_ENT")) IN (" + numbers.map(String.init).joined(separator: ", ") + ") LIMIT 1"
                guard let row = try await runner.run(sql, arguments).first else { continue }
                let existingKey = try row[0].decode(Int64.self)
                let existingNumber = try row[1].decode(Int64.self)
                let isInsertOfThisSave = inserts.contains { $0.entity.table == entity.table && $0.key == existingKey }
                let existing: ObjectID? = isInsertOfThisSave
                    ? nil
                    : ObjectID(storeIdentifier: storeIdentifier, entityName: mapping.entitiesByNumber[existingNumber]?.name ?? entity.name, key: .permanent(existingKey))
                constraintConflicts.append(ConstraintConflict(entityName: declaring, constraint: constraint, values: described, objectID: objectID, existingObjectID: existing))
                return
            }
        }
        throw StrataError(.storeSave, "\(place): \(objectID) breaks a uniqueness constraint that could not be identified")
    }

    /// The object a to-one's stored key names: an insert of this save by
    /// its temporary ID, else the saved row with its actual entity.
    func destinationID(_ runner: PostgresStatementRunner, field: PostgresStoreMapping.ToOneField, key: Int64) async throws -> ObjectID {
        if let table = field.destinationTable?.name, let insert = inserts.first(where: { $0.entity.table == table && $0.key == key }) {
            return insert.objectID
        }
        var name = field.destination
        if let table = field.destinationTable?.name {
            name = try await decoder.entityNames(runner.connection, table: table, keys: [key], logger: runner.logger)[key] ?? name
        }
        return ObjectID(storeIdentifier: storeIdentifier, entityName: name, key: .permanent(key))
    }

    /// A stored value as the attribute value it was written from.
    static func propertyValue(_ stored: SQLValue, type: AttributeType) -> PropertyValue {
        switch (stored, type) {
        case (.null, _): return .null
        case (.integer(let v), .boolean): return .boolean(v != 0)
        case (.integer(let v), _): return .integer(v)
        case (.real(let d), .date): return .date(Date(timeIntervalSinceReferenceDate: d))
        case (.real(let d), _): return .double(d)
        case (.decimal(let d), _): return .decimal(d)
        case (.text(let s), .uri), (.text(let s), .objectID): return .uri(s)
        case (.text(let s), _): return .string(s)
        case (.blob(let data), _): return .binary(data)
        case (.uuid(let uuid), _): return .uuid(uuid)
        }
    }
}
