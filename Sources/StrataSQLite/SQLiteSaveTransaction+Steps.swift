import Foundation
import GRDB
import GRDBSQLite
import StrataModel
import StrataStore
import StrataQuery

extension SQLiteSaveTransaction {
    // MARK: - Steps

    /// The updates whose references are not checked: those whose row did
    /// not exist before the save (`missing` holds the updates that hit no
    /// row; those whose row this save deleted did exist).
    func goneUpdates(_ missing: Set<Int>) -> Set<Int> {
        guard !missing.isEmpty else { return [] }
        let candidates = missing.filter { !updates[$0].savedTargets.isEmpty }
        guard !candidates.isEmpty else { return [] }
        let deleted = Set(deletes.map { RowKey(table: $0.entity.table, key: $0.key) })
        return candidates.filter { !deleted.contains(RowKey(table: updates[$0].entity.table, key: updates[$0].key)) }
    }

    /// Throws 133000 when a saved object the inserts and (still existing)
    /// updates point to does not exist, naming every such reference; does
    /// nothing (no query) when they point to none. One query per
    /// referenced table, in chunks below SQLite's parameter limit.
    func checkSavedTargets(_ db: Database, missingUpdates: Set<Int>) throws {
        let gone = goneUpdates(missingUpdates)
        var targets = insertTargets
        for (index, update) in updates.enumerated() where !update.savedTargets.isEmpty && !gone.contains(index) {
            for item in update.savedTargets {
                targets[item.table.name, default: SavedTargets()].add(item.target, key: item.key, rootEntity: item.table.rootEntity)
            }
        }
        guard !targets.isEmpty else { return }

        // Table → primary key → Z_ENT (0 when not read) of the rows found.
        var found: [String: [Int64: Int64]] = [:]
        var complete = true
        for table in targets.keys.sorted() {
            guard let wanted = targets[table] else { continue }
            let readsEntities = !wanted.kinds.isEmpty
            var rows: [Int64: Int64] = [:]
            rows.reserveCapacity(wanted.keys.count)
            let columns = Self.q("Z_PK") + (readsEntities ? ", " + Self.q("Z_ENT") : "")
            for chunk in SQLiteRowDecoder.chunks(of: Array(wanted.keys)) {
                let sql = "SELECT \(columns) FROM \(Self.q(table)) WHERE \(Self.q("Z_PK")) IN (" + SQLiteRowDecoder.placeholders(chunk.count) + ")"
                let cursor = try Row.fetchCursor(db.makeStatement(sql: sql), arguments: StatementArguments(chunk))
                try cursor.forEach { row in
                    rows[try row.decode(Int64.self, atIndex: 0)] = readsEntities ? try row.decode(Int64.self, atIndex: 1) : 0
                }
            }
            if rows.count != wanted.keys.count {
                complete = false
            } else {
                for (key, entities) in wanted.kinds {
                    guard let number = rows[key], let actual = mapping.entitiesByNumber[number]?.name,
                          entities.allSatisfy({ model.isEntity(actual, kindOf: $0) }) else {
                        complete = false
                        break
                    }
                }
            }
            found[table] = rows
        }
        guard !complete else { return }

        let dangling = danglingReferences(found: found, gone: gone)
        let first = dangling.first ?? "a relationship points to an object that no longer exists"
        var message = "store \(path): \(first)"
        if dangling.count > 1 { message += " (and \(dangling.count - 1) more reference(s) to objects that no longer exist)" }
        throw StrataError(.objectNotFound, message, details: Array(dangling.prefix(100)))
    }

    /// Every to-one value and to-many destination of the save pointing to
    /// a saved object that `found` does not have (or has as a row of another
    /// entity), described, in change-set order (inserts, then updates; by
    /// property name within an object).
    func danglingReferences(found: [String: [Int64: Int64]], gone: Set<Int>) -> [String] {
        func exists(_ target: ObjectID, key: Int64, table: SQLiteStoreMapping.DestinationTable) -> Bool {
            guard let rows = found[table.name] else { return true }
            guard let number = rows[key] else { return false }
            guard target.entityName != table.rootEntity else { return true }
            guard let actual = mapping.entitiesByNumber[number]?.name else { return false }
            return model.isEntity(actual, kindOf: target.entityName)
        }
        var result: [String] = []
        func scan(_ id: ObjectID, entity: Entity, values: PropertyValues, toMany: [String: [ObjectID]]) {
            for name in values.keys.sorted() {
                guard let i = entity.toOneIndex[name], let table = entity.toOnes[i].destinationTable,
                      case .object(let target)? = values[name], case .permanent(let key) = target.key,
                      !exists(target, key: key, table: table) else { continue }
                result.append("\(entity.name).\(name) of \(id) points to \(target), which no longer exists")
            }
            for name in toMany.keys.sorted() {
                guard let field = entity.toManys[name], let table = field.destinationTable else { continue }
                switch field.storage {
                case .transient, .external: continue
                default: break
                }
                for target in toMany[name] ?? [] {
                    guard case .permanent(let key) = target.key, !exists(target, key: key, table: table) else { continue }
                    result.append("\(entity.name).\(name) of \(id) points to \(target), which no longer exists")
                }
            }
        }
        for (insert, change) in zip(inserts, changes.inserts) {
            scan(change.temporaryID, entity: insert.entity, values: change.values, toMany: change.toMany)
        }
        for (index, (update, change)) in zip(updates, changes.updates).enumerated() where !update.savedTargets.isEmpty && !gone.contains(index) {
            scan(update.objectID, entity: update.entity, values: change.values, toMany: change.toMany)
        }
        return result
    }

    /// Inserts every row, one at a time (chunk after chunk as
    /// ``SQLiteInsertPipeline`` encodes a large save's), recording the
    /// uniqueness conflicts. Each row gets its key, the keys of the inserts
    /// it points to and the cells its to-manys' inverses set, then is bound.
    mutating func insertRows(_ db: Database) throws {
        var runner: SQLiteStatementRunner?
        var runnerEntity: Entity?
        switch insertRowSource.take() {
        case nil:
            return
        case .encoded(let cells):
            try insertChunk(db, cells: cells, rows: 0..<inserts.count, runner: &runner, runnerEntity: &runnerEntity)
        case .pipelined(let owner):
            let pipeline = owner.pipeline
            defer { pipeline.cancel() }
            for chunk in 0..<pipeline.chunkCount {
                try insertChunk(db, cells: pipeline.take(chunk), rows: pipeline.rows(ofChunk: chunk), runner: &runner, runnerEntity: &runnerEntity)
            }
        }
    }

    /// Inserts the rows `rows`, whose cells are `cells`, one after the other.
    private mutating func insertChunk(_ db: Database, cells: consuming [SQLValue], rows: Range<Int>, runner: inout SQLiteStatementRunner?, runnerEntity: inout Entity?) throws {
        var cells = cells
        var start = 0
        for i in rows {
            let entity = inserts[i].entity
            let width = entity.insertColumns.count
            defer { start += width }
            cells[start] = .integer(inserts[i].key)
            // A to-one naming an insert wins over a to-many's inverse
            // for the same column (an inconsistent change set).
            if !insertOverrides.isEmpty, let overrides = insertOverrides[i] {
                for (position, value) in overrides { cells[start + position] = value }
            }
            for reference in inserts[i].references {
                cells[start + reference.position] = .integer(try key(of: reference.target))
            }
            if runnerEntity !== entity {
                runner = nil
                runnerEntity = entity
            }
            do {
                let current = try runner ?? SQLiteStatementRunner(db.cachedStatement(sql: entity.insertSQL), path: path)
                runner = current
                try current.run(cells[start..<(start + width)])
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                let insert = inserts[i]
                try recordConstraintConflict(db, entity: entity, objectID: insert.objectID, key: insert.key,
                                             written: Dictionary(zip(entity.insertColumns, cells[start..<(start + width)].map(\.databaseValue)), uniquingKeysWith: { a, _ in a }), error: error)
            }
        }
    }

    /// Every update or delete whose row is missing or at another version,
    /// with the row's current snapshot; nil or empty when none.
    func versionConflicts(_ db: Database) throws -> [StoreConflict]? {
        struct Expectation {
            var objectID: ObjectID
            var key: Int64
            var version: Int64
        }
        var byTable: [String: [Expectation]] = [:]
        var order: [String] = []
        for update in updates {
            if byTable[update.entity.table] == nil { order.append(update.entity.table) }
            byTable[update.entity.table, default: []].append(Expectation(objectID: update.objectID, key: update.key, version: update.expectedVersion))
        }
        for delete in deletes {
            if byTable[delete.entity.table] == nil { order.append(delete.entity.table) }
            byTable[delete.entity.table, default: []].append(Expectation(objectID: delete.objectID, key: delete.key, version: delete.expectedVersion))
        }
        guard !byTable.isEmpty else { return nil }
        var conflicts: [StoreConflict] = []
        for table in order {
            let expectations = byTable[table] ?? []
            var current: [Int64: Int64] = [:]
            for chunk in SQLiteRowDecoder.chunks(of: expectations.map(\.key)) {
                // A kept statement for the usual few keys (every save that
                // updates or deletes runs this).
                let list = SQLiteRowDecoder.KeyList(chunk)
                let sql = "SELECT \(Self.q("Z_PK")), \(Self.q("Z_OPT")) FROM \(Self.q(table)) WHERE \(Self.q("Z_PK")) IN (" + SQLiteRowDecoder.placeholders(list.arguments.count) + ")"
                let statement = try list.isKept ? db.cachedStatement(sql: sql) : db.makeStatement(sql: sql)
                let sqliteStatement = statement.sqliteStatement
                // Both columns are NOT NULL integers.
                try SQLiteStatementRunner.forEachRow(of: statement, arguments: list.arguments, db) {
                    current[sqlite3_column_int64(sqliteStatement, 0)] = sqlite3_column_int64(sqliteStatement, 1)
                }
            }
            var stale: [Expectation] = []
            for expectation in expectations where current[expectation.key] != expectation.version { stale.append(expectation) }
            guard !stale.isEmpty else { continue }
            let present = stale.compactMap { current[$0.key] == nil ? nil : $0.key }
            let snapshots = present.isEmpty ? [:] : try decoder.snapshots(db, table: table, keys: present)
            for expectation in stale {
                conflicts.append(StoreConflict(
                    objectID: expectation.objectID,
                    expectedVersion: expectation.version,
                    currentVersion: current[expectation.key] ?? 0,
                    currentSnapshot: snapshots[expectation.key]
                ))
            }
        }
        return conflicts
    }

    /// Hands out primary keys to the inserts, per hierarchy, from `Z_PRIMARYKEY`.
    mutating func allocateKeys(_ db: Database, keys: inout SQLiteKeyAllocator) throws {
        guard let first = inserts.first?.entity else { return }
        if inserts.allSatisfy({ $0.entity === first }) {
            // One entity (the usual save): one run, nothing to tally.
            var key: Int64 = 0
            if let root = mapping.tables[first.table]?.rootEntity {
                let sql = first.extras.keyAllocation
                key = try keys.reserve(inserts.count, table: first.table, root: root, sql: sql, db: db, path: path)
            }
            for i in inserts.indices {
                inserts[i].key = key
                key += 1
            }
            return
        }
        var counts: [String: Int] = [:]
        var order: [String] = []
        var statements: [String: KeyAllocationSQL] = [:]
        var run = 0
        while run < inserts.count {
            // Runs of consecutive inserts of one entity count at once.
            let entity = inserts[run].entity
            var end = run + 1
            while end < inserts.count, inserts[end].entity === entity { end += 1 }
            if counts[entity.table] == nil {
                order.append(entity.table)
                statements[entity.table] = entity.extras.keyAllocation
            }
            counts[entity.table, default: 0] += end - run
            run = end
        }
        var next: [String: Int64] = [:]
        for table in order {
            guard let root = mapping.tables[table]?.rootEntity, let count = counts[table],
                  let sql = statements[table] else { continue }
            next[table] = try keys.reserve(count, table: table, root: root, sql: sql, db: db, path: path)
        }
        var lastEntity: Entity?
        var table = ""
        var key: Int64 = 0
        for i in inserts.indices {
            let entity = inserts[i].entity
            if lastEntity !== entity {
                if lastEntity != nil { next[table] = key }
                lastEntity = entity
                table = entity.table
                key = next[table] ?? 0
            }
            inserts[i].key = key
            key += 1
        }
    }

    /// Brings the join-table rows of one source to `destinations`.
    func writeJoin(_ db: Database, join: SQLSchema.JoinTable, sourceColumn: String, destinationColumn: String, order: String?, source: Int64, destinations: [Int64], isNew: Bool) throws {
        let table = Self.q(join.name)
        if !isNew {
            let existing = try Int64.fetchAll(
                db.cachedStatement(sql: "SELECT \(Self.q(destinationColumn)) FROM \(table) WHERE \(Self.q(sourceColumn)) = ?"),
                arguments: [source]
            )
            let kept = Set(destinations)
            let remove = try db.cachedStatement(sql: "DELETE FROM \(table) WHERE \(Self.q(sourceColumn)) = ? AND \(Self.q(destinationColumn)) = ?")
            for destination in existing where !kept.contains(destination) {
                try remove.execute(arguments: [source, destination])
            }
        }
        guard !destinations.isEmpty else { return }
        let conflictTarget = "(\(Self.q(join.sourceColumn)), \(Self.q(join.destinationColumn)))"
        if let order {
            let statement = try db.cachedStatement(sql: "INSERT INTO \(table) (\(Self.q(sourceColumn)), \(Self.q(destinationColumn)), \(Self.q(order))) VALUES (?, ?, ?) ON CONFLICT \(conflictTarget) DO UPDATE SET \(Self.q(order)) = excluded.\(Self.q(order))")
            for (position, destination) in destinations.enumerated() {
                try statement.execute(arguments: [source, destination, Int64(position)])
            }
        } else {
            let statement = try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(table) (\(Self.q(sourceColumn)), \(Self.q(destinationColumn))) VALUES (?, ?)")
            for destination in destinations {
                try statement.execute(arguments: [source, destination])
            }
        }
    }
}

/// The statements that hand out primary keys for one table.
struct KeyAllocationSQL: Sendable {
    /// The larger of the highest key recorded in `Z_PRIMARYKEY` for the
    /// root entity (bound) and the highest key in the table itself, in
    /// one statement (run once per table and transaction).
    let highest: String
    /// Records the new highest key.
    let record: String

    /// The statements of `table`.
    init(table: String) {
        let q = SQLiteSaveTransaction.q
        let keyTable = q(SQLiteStoreMetadata.primaryKeyTableName)
        highest = "SELECT MAX(COALESCE((SELECT \(q("Z_MAX")) FROM \(keyTable) WHERE \(q("Z_NAME")) = ?), 0), "
            + "COALESCE((SELECT MAX(\(q("Z_PK"))) FROM \(q(table))), 0))"
        record = "INSERT OR REPLACE INTO \(keyTable) (\(q("Z_NAME")), \(q("Z_MAX"))) VALUES (?, ?)"
    }
}
