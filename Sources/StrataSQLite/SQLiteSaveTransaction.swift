import Foundation
import GRDB
import StrataModel
import StrataStore
import StrataQuery

/// One ``SQLiteStore/save(_:)``: the change set checked and encoded first
/// (``prepare(feed:)``, no database access), then
/// written inside one `BEGIN IMMEDIATE` transaction (``execute(_:)``).
/// The rows of a large insert are encoded in chunks while earlier chunks
/// are written (``SQLiteInsertPipeline``); their attribute values are then
/// checked as they are encoded, and a value that does not fit fails the
/// save in the transaction, which is rolled back.
///
/// Order inside the transaction:
/// 1. version checks (when asked): `Z_OPT` of every updated or deleted row,
///    batched per table; any difference answers `.conflicts` and rolls back;
/// 2. primary keys for the inserts, from a ``SQLiteKeyAllocator`` shared by
///    the saves of one transaction (`Z_PRIMARYKEY`, bumped in the
///    transaction, never below the table's `MAX(Z_PK)`), and temporary IDs
///    replaced by permanent ones everywhere;
/// 3. deletes (rows and the join-table rows naming them);
/// 4. updates (`UPDATE … SET changed columns, Z_OPT = Z_OPT + 1 … RETURNING Z_OPT`);
///    then, when some value or to-many of the save points to a saved object,
///    those objects are looked up (one `SELECT Z_PK … WHERE Z_PK IN (…)` per
///    referenced table, in chunks; `Z_ENT` too when an ID names a
///    subentity): one that does not exist (deleted meanwhile or by this
///    save, a made-up key, a row of another entity) fails the whole save
///    with 133000 (``StrataError/Code/objectNotFound``), nothing written.
///    References of an update whose own row is gone (without version
///    checks, such an update does nothing) are not looked up;
/// 5. to-manys stored through an inverse foreign key: the updated sources'
///    destinations are released (foreign key and order column set to NULL);
/// 6. inserts (`Z_OPT = 1`), whose foreign keys and order columns already
///    carry what the to-manys of this save say about them, through one
///    prepared single-row `INSERT` per entity (``SQLiteStatementRunner``
///    binds each row's values straight from the chunk buffer holding it);
/// 7. to-many destinations that already existed get their foreign key and
///    order; join tables are brought to the new lists (rows removed, then
///    upserted so that the other side's order column survives).
///
/// Writing a to-many does not bump the destinations' versions: the context
/// sends the inverse side as an update of its own.
///
/// A broken uniqueness constraint (SQLite's UNIQUE error from the unique
/// indexes) is looked up (which constraint, which values, which saved
/// object already holds them; none when the clash is between two inserts
/// of this save), the save carries on to find the others, then everything
/// is rolled back and the answer is `.constraintConflicts`.
struct SQLiteSaveTransaction {
    typealias Entity = SQLiteStoreMapping.Entity

    /// A value position whose temporary ID gets its primary key in step 2.
    struct Reference: Sendable {
        var position: Int
        var target: ObjectID
    }

    struct Insert: Sendable {
        var objectID: ObjectID
        var entity: Entity
        var key: Int64 = 0
        /// To-ones naming inserts of this save: their cells get the keys.
        var references: [Reference]
    }

    struct Update {
        var objectID: ObjectID
        var key: Int64
        var entity: Entity
        var expectedVersion: Int64
        var columns: [String]
        var cells: [DatabaseValue]
        var references: [Reference]
        /// Saved objects its to-one values and to-manys point to.
        var savedTargets: [SavedTarget]
        var sql: String
    }

    /// A saved object a value or to-many points to.
    struct SavedTarget {
        var target: ObjectID
        var key: Int64
        var table: SQLiteStoreMapping.DestinationTable
    }

    /// The saved objects a save points to in one hierarchy table, which
    /// must exist when it is written.
    struct SavedTargets {
        /// Their primary keys.
        var keys: Set<Int64> = []
        /// Keys named by an ID of an entity below the table's root, with
        /// those entities: the row must be of that entity or below.
        var kinds: [Int64: Set<String>] = [:]

        mutating func add(_ target: ObjectID, key: Int64, rootEntity: String) {
            keys.insert(key)
            if target.entityName != rootEntity { kinds[key, default: []].insert(target.entityName) }
        }
    }

    /// A row of a hierarchy table.
    struct RowKey: Hashable {
        var table: String
        var key: Int64
    }

    struct Delete {
        var objectID: ObjectID
        var key: Int64
        var entity: Entity
        var expectedVersion: Int64
    }

    struct ToMany {
        /// The source's insert index, or nil for an update.
        var insert: Int?
        var sourceKey: Int64
        var entity: Entity
        var field: SQLiteStoreMapping.ToManyField
        var destinations: [ObjectID]
    }

    /// What a store's saves share: its mapping, and the checks and row
    /// decoder made from it, made once (``SQLiteStore/saveEnvironment``).
    /// One object, so that a transaction holds one reference to them, not
    /// one to each of their parts (a transaction is made, moved and
    /// dropped for every save).
    final class Environment: Sendable {
        let mapping: SQLiteStoreMapping
        let storeIdentifier: String
        let path: String
        let decoder: SQLiteRowDecoder
        /// The checks shared with the other SQL stores.
        let checks: SQLSaveChecks<SQLiteEntityExtras>

        /// The environment of saves into the store at `path` (`place`
        /// names it in errors: ``SQLiteSaveTransaction/place(_:)`` by default).
        init(mapping: SQLiteStoreMapping, storeIdentifier: String, path: String, place: String? = nil) {
            self.mapping = mapping
            self.storeIdentifier = storeIdentifier
            self.path = path
            self.decoder = SQLiteRowDecoder(mapping: mapping, storeIdentifier: storeIdentifier, path: path)
            self.checks = SQLSaveChecks(mapping: mapping, storeIdentifier: storeIdentifier, place: place ?? SQLiteSaveTransaction.place(path))
        }
    }

    let environment: Environment
    var mapping: SQLiteStoreMapping { environment.mapping }
    var model: ObjectModel { environment.mapping.schema.model }
    var storeIdentifier: String { environment.storeIdentifier }
    var path: String { environment.path }
    var decoder: SQLiteRowDecoder { environment.decoder }
    var checks: SQLSaveChecks<SQLiteEntityExtras> { environment.checks }
    let checksVersions: Bool
    /// Access-rule conditions checked inside the transaction.
    let guards: [StoreGuard]
    /// The change set, to name the references to missing objects.
    let changes: StoreChanges

    var inserts: [Insert] = []
    /// Where the inserts' rows come from.
    enum InsertRows {
        /// A save of at most one chunk of rows (not streamed): its cells,
        /// encoded before the transaction, rows one after the other.
        case encoded([SQLValue])
        /// Larger and streamed saves: encoded in chunks, ahead of the writer.
        case pipelined(SQLiteInsertPipeline.Owner)
    }

    /// The inserts' rows; nil when there are none or once written.
    var insertRowSource: InsertRows?
    /// Cells of insert rows set by the transaction (foreign keys and
    /// orders of to-manys stored through an inverse), by insert index.
    var insertOverrides: [Int: [(position: Int, value: SQLValue)]] = [:]
    var updates: [Update] = []
    var deletes: [Delete] = []
    var toManys: [ToMany] = []
    /// Temporary ID → index in ``inserts`` (which also finds an object
    /// inserted twice before the transaction starts); nil when no value
    /// of the save refers to an insert and its keys are known distinct.
    var insertIndex: [ObjectID: Int]? = [:]
    /// Temporary IDs used as references, with the entity and property using them.
    var temporaryReferences: [(target: ObjectID, entity: String, property: String)] = []
    /// Saved objects the inserts point to, by table.
    var insertTargets: [String: SavedTargets] = [:]
    /// The last saved object added to ``insertTargets`` (inserts often
    /// point to the same one, which is then not hashed again).
    var lastInsertTarget: (target: ObjectID, table: String)?
    /// (table, primary key) of an insert → its temporary ID, for constraint
    /// conflicts (built at the first one).
    var temporaryByKey: [String: [Int64: ObjectID]]?
    var constraintConflicts: [ConstraintConflict] = []

    static func q(_ identifier: String) -> String { SQLSchema.quote(identifier) }

    /// Whether the save writes with one statement, a single-row `INSERT`
    /// (one insert, no updates, deletes, to-manys or guards): SQLite undoes
    /// a failed statement by itself, so in a group such a save needs no
    /// savepoint of its own. Its other statements before the `INSERT` only
    /// read (the saved objects its values point to). Asked before
    /// ``execute(_:keys:)``.
    var writesOneStatement: Bool {
        guard inserts.count == 1, updates.isEmpty, deletes.isEmpty, toManys.isEmpty, guards.isEmpty, insertOverrides.isEmpty,
              case .encoded? = insertRowSource else { return false }
        return true
    }

    // MARK: - Preparation (no database access)

    /// A transaction for `changes`, not yet checked: ``prepare(feed:)``
    /// checks and encodes them.
    init(changes: StoreChanges, environment: Environment) {
        self.environment = environment
        self.checksVersions = changes.checksVersions
        self.guards = changes.guards
        self.changes = changes
    }

    /// Checks and encodes `changes` (the inserts' attribute values only
    /// when there are at most 2048 inserts: see ``SQLiteInsertPipeline``;
    /// a larger save checks them as its rows are encoded, in the
    /// transaction). Throws ``StrataError`` for an entity
    /// the store does not hold or a value that does not fit its attribute
    /// (``StrataError/Code/invalidValue``), a reference to an object of
    /// another store (133010) or to an unsaved object the save does not
    /// insert. References to saved objects are only noted here: whether
    /// they exist is checked in the transaction.
    ///
    /// With a `feed`, the inserts are the feed's (`changes` has none): only
    /// their entities are checked here; their values, which must be
    /// attributes only, are checked as their rows are encoded, once
    /// supplied.
    ///
    /// A method on a transaction made by ``init(changes:environment:)``,
    /// not an initializer: a throwing initializer that calls mutating
    /// methods keeps `self` in memory and returns a copy of it, retaining
    /// everything the transaction holds once more for every save.
    mutating func prepare(feed: StoreInsertFeed?) throws(StrataError) {
        let insertIDs = feed?.temporaryIDs
        let insertCount = insertIDs?.count ?? changes.inserts.count
        inserts.reserveCapacity(insertCount)
        // Each insert with its entity (consecutive inserts usually share
        // one); its references come below. By index, reading fields in
        // place: copying a change set's `Insert` retains its values'
        // storage, a cache miss per insert.
        for i in 0..<insertCount {
            let id = insertIDs?[i] ?? changes.inserts[i].temporaryID
            guard id.isTemporary else {
                throw StrataError(.invalidValue, "store \(environment.path): insert of \(id) needs a temporary ID")
            }
            let entity: Entity
            if let last = inserts.last?.entity, last.name == id.entityName {
                entity = last
            } else {
                entity = try environment.checks.heldEntity(id)
                if entity.isAbstract {
                    throw StrataError(.invalidValue, "store \(environment.path): \(entity.name) is abstract and cannot be inserted")
                }
            }
            inserts.append(Insert(objectID: id, entity: entity, references: []))
        }

        // To-ones and names that are not attributes are checked here;
        // attribute values when their rows are encoded.
        var plan: SQLiteInsertPlan?
        for i in changes.inserts.indices {
            let id = changes.inserts[i].temporaryID
            let entity = inserts[i].entity
            let layout = changes.inserts[i].values.layout
            if plan?.fits(entity, layout) != true { plan = SQLiteInsertPlan(entity: entity, layout: layout) }
            var references: [Reference] = []
            if let plan, !plan.checkedSlots.isEmpty {
                for slot in plan.checkedSlots {
                    if let value = changes.inserts[i].values[slot: slot] { try check(layout.names[slot], value, of: entity, object: id, references: &references) }
                }
            }
            if !changes.inserts[i].values.valuesOutsideLayout.isEmpty {
                for (name, value) in changes.inserts[i].values.valuesOutsideLayout { try check(name, value, of: entity, object: id, references: &references) }
            }
            if !references.isEmpty { inserts[i].references = references }
            if !changes.inserts[i].toMany.isEmpty {
                for (name, destinations) in changes.inserts[i].toMany.sorted(by: { $0.key < $1.key }) {
                    let field = try environment.checks.toManyField(name, of: entity)
                    let checked = try environment.checks.checkedDestinations(destinations, field: field, entity: entity)
                    if let table = field.destinationTable {
                        for target in checked {
                            if case .permanent(let key) = target.key { noteInsertTarget(target, key: key, table: table) }
                        }
                    }
                    toManys.append(ToMany(insert: i, sourceKey: 0, entity: entity, field: field, destinations: checked))
                }
            }
        }

        for update in changes.updates {
            let (entity, key) = try environment.checks.savedObject(update.objectID, operation: "update")
            var assignments: [(column: String, value: DatabaseValue, reference: ObjectID?)] = []
            var savedTargets: [SavedTarget] = []
            for (name, value) in update.values {
                guard let (column, stored, reference) = try environment.checks.encode(name, value, of: entity, object: update.objectID) else { continue }
                assignments.append((column, stored.databaseValue, reference))
                if let i = entity.toOneIndex[name], let table = entity.toOnes[i].destinationTable,
                   case .object(let target) = value, case .permanent(let key) = target.key {
                    savedTargets.append(SavedTarget(target: target, key: key, table: table))
                }
            }
            assignments.sort { $0.column < $1.column }
            var sql = "UPDATE \(Self.q(entity.table)) SET "
            for assignment in assignments { sql += Self.q(assignment.column) + " = ?, " }
            sql += "\(Self.q("Z_OPT")) = \(Self.q("Z_OPT")) + 1 WHERE \(Self.q("Z_PK")) = ? RETURNING \(Self.q("Z_OPT"))"
            var references: [Reference] = []
            for (i, assignment) in assignments.enumerated() {
                if let target = assignment.reference { references.append(Reference(position: i, target: target)) }
            }
            for (name, value) in update.values {
                if case .object(let target) = value, target.isTemporary { temporaryReferences.append((target, entity.name, name)) }
            }
            for (name, destinations) in update.toMany.sorted(by: { $0.key < $1.key }) {
                let field = try environment.checks.toManyField(name, of: entity)
                let checked = try environment.checks.checkedDestinations(destinations, field: field, entity: entity)
                if let table = field.destinationTable {
                    for target in checked {
                        if case .permanent(let key) = target.key { savedTargets.append(SavedTarget(target: target, key: key, table: table)) }
                    }
                }
                toManys.append(ToMany(insert: nil, sourceKey: key, entity: entity, field: field, destinations: checked))
            }
            updates.append(Update(
                objectID: update.objectID, key: key, entity: entity, expectedVersion: update.expectedVersion,
                columns: assignments.map(\.column), cells: assignments.map(\.value), references: references,
                savedTargets: savedTargets, sql: sql
            ))
        }

        for delete in changes.deletes {
            let (entity, key) = try environment.checks.savedObject(delete.objectID, operation: "delete")
            deletes.append(Delete(objectID: delete.objectID, key: key, entity: entity, expectedVersion: delete.expectedVersion))
        }

        // Temporary IDs used as references must be inserts of this save.
        for item in toManys {
            for destination in item.destinations where destination.isTemporary {
                temporaryReferences.append((destination, item.entity.name, item.field.name))
            }
        }
        // Each insert once. The index references resolve through is built
        // only when some value refers to an insert; otherwise keys made in
        // this process in increasing order prove it without hashing
        // (a context lists its inserts in the order it made them).
        if temporaryReferences.isEmpty, Self.areMadeInOrder(inserts) {
            insertIndex = nil
        } else {
            try buildInsertIndex()
        }
        for (target, entity, property) in temporaryReferences where insertIndex?[target] == nil {
            throw StrataError(.invalidValue, "\(entity).\(property) refers to unsaved object \(target), which this save does not insert")
        }
        temporaryReferences = []
        if !inserts.isEmpty {
            let source = SQLiteInsertPipeline.Source(inserts: changes.inserts, feed: feed, transactionInserts: inserts)
            if feed == nil, source.count <= SQLiteInsertPipeline.chunkRows {
                // A small save (every server request): no pipeline to set up.
                insertRowSource = .encoded(try source.encode(0..<source.count))
            } else {
                let pipeline = SQLiteInsertPipeline(source)
                if let failure = pipeline.eagerFailure { throw failure }
                insertRowSource = .pipelined(SQLiteInsertPipeline.Owner(pipeline))
            }
        }
    }

    /// Checks one value of an insert that is not an attribute's: a to-one
    /// (noting a temporary target to resolve, or the saved object it names)
    /// or a name the entity does not persist (transient: ignored).
    mutating func check(_ name: String, _ value: PropertyValue, of entity: Entity, object: ObjectID, references: inout [Reference]) throws(StrataError) {
        switch entity.slot(named: name) {
        case .attribute?:
            // Checked when the row is encoded.
            break
        case .toOne(let field, let position)?:
            let toOneField = entity.toOnes[field]
            let (_, pending) = try environment.checks.toOne(value, field: toOneField, entity: entity)
            if let pending {
                references.append(Reference(position: position, target: pending))
                temporaryReferences.append((pending, entity.name, name))
            } else if case .object(let target) = value, case .permanent(let key) = target.key, let table = toOneField.destinationTable {
                noteInsertTarget(target, key: key, table: table)
            }
        case nil:
            _ = try environment.checks.encode(name, value, of: entity, object: object)
        }
    }

    /// Whether every insert's temporary key was made by this process's
    /// ``TemporaryKeySource`` after the previous insert's (so none is
    /// inserted twice).
    static func areMadeInOrder(_ inserts: [Insert]) -> Bool {
        var last: UInt64?
        for insert in inserts {
            guard case .temporary(let key) = insert.objectID.key,
                  let number = TemporaryKeySource.sequenceNumber(of: key),
                  last.map({ number > $0 }) ?? true else { return false }
            last = number
        }
        return true
    }

    /// Indexes the inserts by temporary ID, refusing one inserted twice.
    mutating func buildInsertIndex() throws(StrataError) {
        var index: [ObjectID: Int] = [:]
        index.reserveCapacity(inserts.count)
        for (i, insert) in inserts.enumerated() {
            guard index.updateValue(i, forKey: insert.objectID) == nil else {
                throw StrataError(.invalidValue, "store \(path): \(insert.objectID) is inserted twice in one save")
            }
        }
        insertIndex = index
    }

    /// Records that an insert points to a saved object.
    mutating func noteInsertTarget(_ target: ObjectID, key: Int64, table: SQLiteStoreMapping.DestinationTable) {
        if let last = lastInsertTarget, last.target == target, last.table == table.name { return }
        lastInsertTarget = (target, table.name)
        insertTargets[table.name, default: SavedTargets()].add(target, key: key, rootEntity: table.rootEntity)
    }

    // MARK: - The transaction

    /// Writes the change set inside the caller's immediate transaction (or
    /// savepoint), taking primary keys from `keys` (which the caller records
    /// before committing); the caller rolls back unless the answer is
    /// `.committed`. Runs once: the inserts' encoded rows are consumed
    /// (a retry makes a new transaction value).
    mutating func execute(_ db: Database, keys: inout SQLiteKeyAllocator) throws -> StoreSaveResult {
        if checksVersions, let conflicts = try versionConflicts(db), !conflicts.isEmpty {
            return .conflicts(conflicts)
        }
        try allocateKeys(db, keys: &keys)
        try checkGuards(db, phase: .before)

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
                    if let i = insertIndex?[destination], inserts[i].entity.table == table,
                       let fk = inserts[i].entity.insertPosition[column],
                       order == nil || order.flatMap({ inserts[i].entity.insertPosition[$0] }) != nil {
                        insertOverrides[i, default: []].append((fk, .integer(source)))
                        if let order, let o = inserts[i].entity.insertPosition[order] { insertOverrides[i, default: []].append((o, .integer(Int64(position)))) }
                    } else {
                        assignments.append((table, column, order, destination, try key(of: destination), source, position))
                    }
                }
            case .joinTable(let table, let sourceColumn, let destinationColumn, let order):
                guard let join = mapping.joinTables[table] else {
                    throw StrataError(.storeSave, "store \(path): join table \(table) is not in the schema")
                }
                var keys: [Int64] = []
                keys.reserveCapacity(item.destinations.count)
                for destination in item.destinations { keys.append(try key(of: destination)) }
                joins.append((join, sourceColumn, destinationColumn, order, source, keys, item.insert != nil))
            default:
                break
            }
        }

        // 3. Deletes.
        for delete in deletes {
            let statement = try db.cachedStatement(sql: "DELETE FROM \(Self.q(delete.entity.table)) WHERE \(Self.q("Z_PK")) = ?")
            try statement.execute(arguments: [delete.key])
            for reference in mapping.joinReferences[delete.entity.table] ?? [] {
                try db.cachedStatement(sql: "DELETE FROM \(Self.q(reference.table)) WHERE \(Self.q(reference.column)) = ?")
                    .execute(arguments: [delete.key])
            }
        }

        // 4. Updates (noting those whose row was already gone), then the
        //    saved objects the save points to must exist.
        var missingUpdates: Set<Int> = []
        for (index, update) in updates.enumerated() {
            var values = update.cells
            for reference in update.references { values[reference.position] = try key(of: reference.target).databaseValue }
            values.append(update.key.databaseValue)
            do {
                // The columns set are the client's choice: a shape per set.
                let statement = try db.boundedCachedStatement(sql: update.sql, limit: mapping.cachedStatementLimit)
                if let version = try Int64.fetchOne(statement, arguments: StatementArguments(values)) {
                    commit.updatedVersions[update.objectID] = version
                } else {
                    missingUpdates.insert(index)
                }
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                try recordConstraintConflict(db, entity: update.entity, objectID: update.objectID, key: update.key,
                                             written: Dictionary(zip(update.columns, values), uniquingKeysWith: { a, _ in a }), error: error)
            }
        }
        try checkSavedTargets(db, missingUpdates: missingUpdates)

        // 5. Destinations released by updated to-manys.
        for release in releases {
            var sql = "UPDATE \(Self.q(release.table)) SET \(Self.q(release.column)) = NULL"
            if let order = release.order { sql += ", \(Self.q(order)) = NULL" }
            sql += " WHERE \(Self.q(release.column)) = ?"
            try db.cachedStatement(sql: sql).execute(arguments: [release.source])
        }

        // 6. Inserts, through one prepared single-row INSERT per entity
        //    bound row after row (a multi-row INSERT is slower in SQLite:
        //    its VALUES rows run as a co-routine, and a unique-constraint
        //    failure would undo the batch).
        try insertRows(db)
        if constraintConflicts.isEmpty {
            // In the order of the change set's inserts: no map keyed by
            // temporary ID (the context pairs them by position).
            var temporaryIDs: [ObjectID] = []
            var insertedIDs: [ObjectID] = []
            temporaryIDs.reserveCapacity(inserts.count)
            insertedIDs.reserveCapacity(inserts.count)
            for insert in inserts {
                temporaryIDs.append(insert.objectID)
                insertedIDs.append(ObjectID(storeIdentifier: storeIdentifier, entityName: insert.entity.name, key: .permanent(insert.key)))
            }
            commit.temporaryIDs = temporaryIDs
            commit.insertedIDs = insertedIDs
        }

        // 7. Existing destinations of inverse-foreign-key to-manys, then join tables.
        for assignment in assignments {
            var sql = "UPDATE \(Self.q(assignment.table)) SET \(Self.q(assignment.column)) = ?"
            var values: [DatabaseValue] = [assignment.source.databaseValue]
            var written: [String: DatabaseValue] = [assignment.column: assignment.source.databaseValue]
            if let order = assignment.order {
                sql += ", \(Self.q(order)) = ?"
                values.append(Int64(assignment.position).databaseValue)
                written[order] = Int64(assignment.position).databaseValue
            }
            sql += " WHERE \(Self.q("Z_PK")) = ?"
            values.append(assignment.key.databaseValue)
            do {
                try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(values))
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                let destination = mapping.entities[assignment.destination.entityName]
                guard let destination else { throw error }
                try recordConstraintConflict(db, entity: destination, objectID: assignment.destination, key: assignment.key, written: written, error: error)
            }
        }
        for join in joins {
            try writeJoin(db, join: join.join, sourceColumn: join.sourceColumn, destinationColumn: join.destinationColumn,
                          order: join.order, source: join.source, destinations: join.destinations, isNew: join.isNew)
        }

        if !constraintConflicts.isEmpty { return .constraintConflicts(constraintConflicts) }
        try checkGuards(db, phase: .after)
        return .committed(commit)
    }

    /// Fails with the first guard of `phase` (access rules) that some of
    /// its objects violate, as the transaction sees them now: before the
    /// writes for `.before`, after them for `.after`.
    func checkGuards(_ db: Database, phase: StoreGuard.Phase) throws {
        var insertedKeys: [ObjectID: Int64]?
        for guarded in guards where guarded.phase == phase && !guarded.objectIDs.isEmpty {
            var ids: [ObjectID] = []
            ids.reserveCapacity(guarded.objectIDs.count)
            for id in guarded.objectIDs {
                guard id.isTemporary else {
                    ids.append(id)
                    continue
                }
                if insertedKeys == nil {
                    insertedKeys = Dictionary(inserts.map { ($0.objectID, $0.key) }, uniquingKeysWith: { first, _ in first })
                }
                guard let key = insertedKeys?[id] else {
                    throw StrataError(.invalidValue, "store \(path): \(id) is not inserted by this save")
                }
                ids.append(ObjectID(storeIdentifier: storeIdentifier, entityName: id.entityName, key: .permanent(key)))
            }
            let query = try mapping.compiler.countQuery(guarded.violations(among: ids))
            if try Int.fetchOne(db.boundedCachedStatement(sql: query.sql, limit: mapping.cachedStatementLimit), arguments: query.statementArguments) ?? 0 > 0 {
                throw guarded.denial
            }
        }
    }

    /// How errors name a store at `path` (`store /path/file`): made once
    /// per group of saves by the writer, not once per save.
    static func place(_ path: String) -> String {
        "store \(path)"
    }

    /// `count` NULLs. (Not `unsafeUninitializedCapacity`: for a count of 0
    /// it writes the shared empty-array singleton, which ThreadSanitizer
    /// reports as a race between concurrent saves.)
    static func nulls(_ count: Int) -> [SQLValue] {
        [SQLValue](repeating: .null, count: count)
    }

    /// The primary key of a saved object or of an insert of this save.
    func key(of id: ObjectID) throws -> Int64 {
        if let key = id.primaryKey { return key }
        guard let i = insertIndex?[id] else {
            throw StrataError(.invalidValue, "store \(path): \(id) is not inserted by this save")
        }
        return inserts[i].key
    }

}
