import Foundation
import StrataModel
import StrataQuery
import StrataStore

/// One ``PostgresStore/save(_:)``: the change set checked and encoded first
/// (``init(changes:mapping:storeIdentifier:place:)``, no database access),
/// then written inside one transaction (``execute(_:logger:)``), in the
/// order the SQLite store writes (see `SQLiteSaveTransaction`), with what
/// PostgreSQL does differently:
/// 1. version checks read `Z_OPT` with `FOR NO KEY UPDATE` (`FOR UPDATE`
///    for deletes), in key order: a row checked stays at that version
///    until the commit, whatever other servers do, and two saves lock
///    shared rows in the same order;
/// 2. keys come from `Z_PRIMARYKEY`, reserved for a whole group of saves
///    before any of them takes a row lock (``reserveKeys(_:mapping:runner:place:)``,
///    hierarchies in name order): the rows stay locked until the commit,
///    so keys are never handed out twice; a save that rolls back leaves
///    its keys unused;
/// 3. saved objects a save points to are read `FOR KEY SHARE`: no other
///    save can delete them before this one commits;
/// 4. inserts go in multi-row `INSERT … ON CONFLICT DO NOTHING RETURNING
///    "Z_PK"`: a row missing from the answer broke a uniqueness
///    constraint (PostgreSQL's unique indexes decide, across servers);
///    updates that write a constrained column run inside a savepoint, and
///    a unique violation (23505) is rolled back to it and recorded;
/// 5. every text column's folded copies are written beside it.
struct PostgresSaveTransaction {
    typealias Entity = PostgresStoreMapping.Entity

    /// A value position whose temporary ID gets its primary key in step 2.
    struct Reference {
        var position: Int
        var target: ObjectID
    }

    struct Insert {
        var objectID: ObjectID
        var entity: Entity
        var key: Int64 = 0
        /// The row, in the entity's insert-column order (folded copies not included).
        var cells: [SQLValue]
        /// To-ones naming inserts of this save.
        var references: [Reference]
    }

    struct Assignment {
        var column: String
        var value: SQLValue
        var reference: ObjectID?
    }

    struct Update {
        var objectID: ObjectID
        var key: Int64
        var entity: Entity
        var expectedVersion: Int64
        var assignments: [Assignment]
        /// Saved objects its to-one values and to-manys point to.
        var savedTargets: [SavedTarget]
    }

    /// A saved object a value or to-many points to.
    struct SavedTarget {
        var target: ObjectID
        var key: Int64
        var table: PostgresStoreMapping.DestinationTable
        /// The object pointing to it and the property that does, for messages.
        var source: ObjectID
        var property: String
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
        var field: PostgresStoreMapping.ToManyField
        var destinations: [ObjectID]
    }

    let mapping: PostgresStoreMapping
    let model: ObjectModel
    let storeIdentifier: String
    /// The store, for messages.
    let place: String
    let changes: StoreChanges
    let decoder: PostgresRowDecoder
    /// The checks shared with the SQLite store.
    let checks: SQLSaveChecks<PostgresEntityExtras>

    var inserts: [Insert] = []
    var updates: [Update] = []
    var deletes: [Delete] = []
    var toManys: [ToMany] = []
    /// Temporary ID → index in ``inserts``.
    var insertIndex: [ObjectID: Int] = [:]
    /// Saved objects the inserts point to.
    var insertTargets: [SavedTarget] = []
    var constraintConflicts: [ConstraintConflict] = []
    /// The preserved attributes of the deleted objects, read before the
    /// deletes, by index in the change set's deletes (for history).
    var tombstones: [Int: [(String, AttributeType, PropertyValue)]] = [:]

    static func q(_ identifier: String) -> String { SQLSchema.quote(identifier) }

    // MARK: - Preparation (no database access)

    /// Checks and encodes `changes`: an entity the store does not hold, a
    /// value that does not fit its attribute (a string holding U+0000
    /// included), a reference to another store's object (133010) or to an
    /// unsaved object the save does not insert are refused here.
    init(changes: StoreChanges, mapping: PostgresStoreMapping, decoder: PostgresRowDecoder, storeIdentifier: String, place: String) throws(StrataError) {
        self.mapping = mapping
        self.model = mapping.schema.model
        self.storeIdentifier = storeIdentifier
        self.place = place
        self.changes = changes
        self.decoder = decoder
        let checks = SQLSaveChecks(mapping: mapping, storeIdentifier: storeIdentifier, place: place,
                                   refusedNUL: "a PostgreSQL store cannot hold a string containing U+0000 (PostgreSQL's text cannot)")
        self.checks = checks

        var temporaryReferences: [(target: ObjectID, entity: String, property: String)] = []
        inserts.reserveCapacity(changes.inserts.count)
        for (index, insert) in changes.inserts.enumerated() {
            let id = insert.temporaryID
            guard id.isTemporary else {
                throw StrataError(.invalidValue, "\(place): insert of \(id) needs a temporary ID")
            }
            let entity = try checks.heldEntity(id)
            if entity.isAbstract {
                throw StrataError(.invalidValue, "\(place): \(entity.name) is abstract and cannot be inserted")
            }
            guard insertIndex.updateValue(index, forKey: id) == nil else {
                throw StrataError(.invalidValue, "\(place): \(id) is inserted twice in one save")
            }
            var cells = [SQLValue](repeating: .null, count: entity.insertColumns.count)
            cells[1] = .integer(entity.number)
            var references: [Reference] = []
            for (name, value) in insert.values {
                switch entity.slot(named: name) {
                case .attribute(let field, let position)?:
                    cells[position] = try checks.encode(value, field: entity.attributes[field], entity: entity.name)
                case .toOne(let field, let position)?:
                    let toOneField = entity.toOnes[field]
                    let (stored, pending) = try checks.toOne(value, field: toOneField, entity: entity)
                    cells[position] = stored
                    if let pending {
                        references.append(Reference(position: position, target: pending))
                        temporaryReferences.append((pending, entity.name, name))
                    } else if case .object(let target) = value, case .permanent(let key) = target.key, let table = toOneField.destinationTable {
                        insertTargets.append(SavedTarget(target: target, key: key, table: table, source: id, property: name))
                    }
                case nil:
                    _ = try checks.encode(name, value, of: entity, object: id)
                }
            }
            inserts.append(Insert(objectID: id, entity: entity, cells: cells, references: references))
            for (name, destinations) in insert.toMany.sorted(by: { $0.key < $1.key }) {
                let field = try checks.toManyField(name, of: entity)
                let checked = try checks.checkedDestinations(destinations, field: field, entity: entity)
                if let table = field.destinationTable {
                    for target in checked {
                        if case .permanent(let key) = target.key { insertTargets.append(SavedTarget(target: target, key: key, table: table, source: id, property: name)) }
                    }
                }
                toManys.append(ToMany(insert: index, sourceKey: 0, entity: entity, field: field, destinations: checked))
            }
        }

        for update in changes.updates {
            let (entity, key) = try checks.savedObject(update.objectID, operation: "update")
            var assignments: [Assignment] = []
            var savedTargets: [SavedTarget] = []
            for (name, value) in update.values {
                guard let (column, stored, reference) = try checks.encode(name, value, of: entity, object: update.objectID) else { continue }
                assignments.append(Assignment(column: column, value: stored, reference: reference))
                if let reference { temporaryReferences.append((reference, entity.name, name)) }
                if let i = entity.toOneIndex[name], let table = entity.toOnes[i].destinationTable,
                   case .object(let target) = value, case .permanent(let targetKey) = target.key {
                    savedTargets.append(SavedTarget(target: target, key: targetKey, table: table, source: update.objectID, property: name))
                }
            }
            assignments.sort { $0.column < $1.column }
            for (name, destinations) in update.toMany.sorted(by: { $0.key < $1.key }) {
                let field = try checks.toManyField(name, of: entity)
                let checked = try checks.checkedDestinations(destinations, field: field, entity: entity)
                if let table = field.destinationTable {
                    for target in checked {
                        if case .permanent(let targetKey) = target.key { savedTargets.append(SavedTarget(target: target, key: targetKey, table: table, source: update.objectID, property: name)) }
                    }
                }
                toManys.append(ToMany(insert: nil, sourceKey: key, entity: entity, field: field, destinations: checked))
            }
            updates.append(Update(objectID: update.objectID, key: key, entity: entity, expectedVersion: update.expectedVersion,
                                  assignments: assignments, savedTargets: savedTargets))
        }

        for delete in changes.deletes {
            let (entity, key) = try checks.savedObject(delete.objectID, operation: "delete")
            deletes.append(Delete(objectID: delete.objectID, key: key, entity: entity, expectedVersion: delete.expectedVersion))
        }

        for item in toManys {
            for destination in item.destinations where destination.isTemporary {
                temporaryReferences.append((destination, item.entity.name, item.field.name))
            }
        }
        for (target, entity, property) in temporaryReferences where insertIndex[target] == nil {
            throw StrataError(.invalidValue, "\(entity).\(property) refers to unsaved object \(target), which this save does not insert")
        }
        // Recorded in history, whose text columns cannot hold U+0000 either.
        for (label, text) in [("author", changes.author), ("context name", changes.contextName)] {
            if let text, SQLValueCoding.containsNUL(text) {
                throw StrataError(.invalidValue, "\(place): the save's \(label) contains U+0000, which a PostgreSQL store cannot record")
            }
        }
    }

    /// The primary key of a saved object or of an insert of this save.
    func key(of id: ObjectID) throws(StrataError) -> Int64 {
        if let key = id.primaryKey { return key }
        guard let i = insertIndex[id] else {
            throw StrataError(.invalidValue, "\(place): \(id) is not inserted by this save")
        }
        return inserts[i].key
    }
}
