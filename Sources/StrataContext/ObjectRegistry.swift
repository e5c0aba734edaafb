import StrataModel

/// The objects an ``ObjectGraph`` has registered, by ID.
///
/// Saved objects (permanent IDs) are in one dictionary per store and
/// entity, keyed by primary key: 16 bytes a bucket instead of a whole
/// ``ObjectID``'s 56, and an integer hashed instead of a name. Inserted objects
/// (temporary IDs) are in an array, each knowing its position, and their
/// dictionary is built only at the first lookup by a temporary ID, then
/// kept: a bulk insert that nothing looks up by temporary ID (the common
/// case: an import, a server request) never hashes its objects until the
/// save gives them permanent IDs, when they move to the saved dictionary
/// in one pass.
///
/// Invariant: no two objects in the array share an ID. New objects (a
/// fresh temporary ID from ``ObjectID/temporary(entityName:)``) cannot
/// clash; any other insertion of a temporary ID builds the dictionary
/// first, so it finds and replaces the object already holding the ID.
struct ObjectRegistry {
    /// The store and entity of permanent IDs.
    private struct Table: Hashable {
        let storeIdentifier: String
        let entityName: String

        init(_ id: ObjectID) {
            storeIdentifier = id.storeIdentifier
            entityName = id.entityName
        }

        /// Entity names tell tables apart in practice; equality still
        /// compares both fields.
        func hash(into hasher: inout Hasher) {
            hasher.combine(entityName)
        }
    }

    private var saved: [Table: [Int64: ManagedObject]] = [:]
    private var savedCount = 0
    private var unsaved: [ManagedObject] = []
    /// The objects of ``unsaved`` by ID, once something looked one up.
    private var unsavedIndex: [ObjectID: ManagedObject]?

    /// How many objects are registered.
    var count: Int { savedCount + unsaved.count }

    /// Every registered object, as they are now (later changes to the
    /// registry do not affect an iteration in progress).
    var values: Objects { Objects(saved: saved.values.map(\.values), unsaved: unsaved) }

    /// The object registered under `id`, if any.
    mutating func object(for id: ObjectID) -> ManagedObject? {
        switch id.key {
        case .permanent(let key):
            return saved[Table(id)]?[key]
        case .temporary:
            buildIndexIfNeeded()
            return unsavedIndex?[id]
        }
    }

    /// The registered object for a permanent ID, made by `make` and
    /// registered when there is none.
    mutating func savedObject(for id: ObjectID, key: Int64, orMake make: () -> ManagedObject) -> ManagedObject {
        // One lookup of the table, found or made.
        var made = false
        let object = Self.object(in: &saved[Table(id), default: [:]], key: key) {
            made = true
            return make()
        }
        if made { savedCount += 1 }
        return object
    }

    private static func object(in objects: inout [Int64: ManagedObject], key: Int64, orMake make: () -> ManagedObject) -> ManagedObject {
        if let existing = objects[key] { return existing }
        let object = make()
        objects[key] = object
        return object
    }

    /// Registers `object` under its ID and returns the object it replaces.
    /// `isNew`: the object's temporary ID was just made for it, so no
    /// other object can hold it.
    @discardableResult
    mutating func insert(_ object: ManagedObject, isNew: Bool = false) -> ManagedObject? {
        let id = object.objectID
        if case .permanent(let key) = id.key {
            let previous = saved[Table(id), default: [:]].updateValue(object, forKey: key)
            if previous == nil { savedCount += 1 }
            return previous === object ? nil : previous
        }
        if object.registryPosition >= 0 { return nil }
        var previous: ManagedObject?
        if !isNew { buildIndexIfNeeded() }
        if let replaced = unsavedIndex?.updateValue(object, forKey: id) {
            previous = replaced
            removeUnsaved(replaced)
        }
        object.registryPosition = unsaved.count
        unsaved.append(object)
        return previous
    }

    /// Unregisters the object under `id` and returns it.
    @discardableResult
    mutating func remove(_ id: ObjectID) -> ManagedObject? {
        if case .permanent(let key) = id.key { return removeSaved(id, key: key) }
        buildIndexIfNeeded()
        guard let removed = unsavedIndex?.removeValue(forKey: id) else { return nil }
        removeUnsaved(removed)
        return removed
    }

    /// Gives objects new IDs (after a save made them permanent) and
    /// re-files the registered ones under them, in one pass over the
    /// inserted objects; returns the objects that were registered under
    /// the new IDs and no longer are.
    mutating func changeIDs(_ changes: [(ManagedObject, ObjectID)]) -> [ManagedObject] {
        // Marks an unsaved object leaving the array.
        let leaving = -2
        // Positions in `changes` of the registered objects.
        var moving: [Int] = []
        moving.reserveCapacity(changes.count)
        var leavingCount = 0
        for (index, (object, id)) in changes.enumerated() {
            if object.registryPosition >= 0 {
                unsavedIndex?.removeValue(forKey: object.objectID)
                object.registryPosition = leaving
                leavingCount += 1
                moving.append(index)
            } else if object.registryPosition == leaving {
                continue
            } else if case .permanent(let key) = object.objectID.key, saved[Table(object.objectID)]?[key] === object {
                removeSaved(object.objectID, key: key)
                moving.append(index)
            } else {
                object.objectID = id
            }
        }
        if leavingCount > 0 {
            if leavingCount == unsaved.count {
                for object in unsaved { object.registryPosition = -1 }
                unsaved.removeAll()
            } else {
                var kept: [ManagedObject] = []
                kept.reserveCapacity(unsaved.count - leavingCount)
                for object in unsaved {
                    if object.registryPosition == leaving {
                        object.registryPosition = -1
                    } else {
                        object.registryPosition = kept.count
                        kept.append(object)
                    }
                }
                unsaved = kept
            }
        }
        if let first = moving.first {
            // Inserts of a save are usually of one entity.
            reserveCapacity(moving.count, like: changes[first].1)
        }
        var replaced: [ManagedObject] = []
        var next = 0
        while next < moving.count {
            let (first, firstID) = changes[moving[next]]
            guard !firstID.isTemporary else {
                first.objectID = firstID
                if let previous = insert(first) { replaced.append(previous) }
                next += 1
                continue
            }
            // A run of objects of one table goes into its dictionary, taken
            // out of `saved` meanwhile (no copy), without hashing the
            // table's names for each object.
            let table = Table(firstID)
            var objects = saved.removeValue(forKey: table) ?? [:]
            while next < moving.count {
                let (object, id) = changes[moving[next]]
                guard case .permanent(let key) = id.key, id.entityName == table.entityName, id.storeIdentifier == table.storeIdentifier else { break }
                object.objectID = id
                if let previous = objects.updateValue(object, forKey: key) {
                    if previous !== object { replaced.append(previous) }
                } else {
                    savedCount += 1
                }
                next += 1
            }
            saved[table] = objects
        }
        return replaced
    }

    /// Makes room for `additional` more saved objects of `id`'s store and entity.
    mutating func reserveCapacity(_ additional: Int, like id: ObjectID) {
        guard !id.isTemporary else { return }
        let table = Table(id)
        let needed = (saved[table]?.count ?? 0) + additional
        if needed > saved[table]?.capacity ?? 0 { saved[table, default: [:]].reserveCapacity(needed) }
    }

    /// Unregisters every object.
    mutating func removeAll() {
        saved.removeAll()
        savedCount = 0
        for object in unsaved { object.registryPosition = -1 }
        unsaved.removeAll()
        unsavedIndex = nil
    }

    private mutating func buildIndexIfNeeded() {
        guard unsavedIndex == nil else { return }
        var built: [ObjectID: ManagedObject] = [:]
        built.reserveCapacity(unsaved.count)
        for object in unsaved { built[object.objectID] = object }
        unsavedIndex = built
    }

    @discardableResult
    private mutating func removeSaved(_ id: ObjectID, key: Int64) -> ManagedObject? {
        let table = Table(id)
        guard let removed = saved[table]?.removeValue(forKey: key) else { return nil }
        savedCount -= 1
        if saved[table]?.isEmpty == true { saved[table] = nil }
        return removed
    }

    /// Swaps the last object into `object`'s place.
    private mutating func removeUnsaved(_ object: ManagedObject) {
        let position = object.registryPosition
        guard position >= 0, position < unsaved.count, unsaved[position] === object else { return }
        let last = unsaved.removeLast()
        if last !== object {
            unsaved[position] = last
            last.registryPosition = position
        }
        object.registryPosition = -1
    }

    /// A registry's objects at one moment.
    struct Objects: Sequence {
        let saved: [Dictionary<Int64, ManagedObject>.Values]
        let unsaved: [ManagedObject]

        func makeIterator() -> Iterator {
            Iterator(tables: saved.makeIterator(), unsaved: unsaved.makeIterator())
        }

        var underestimatedCount: Int { saved.reduce(unsaved.count) { $0 + $1.count } }

        struct Iterator: IteratorProtocol {
            var tables: IndexingIterator<[Dictionary<Int64, ManagedObject>.Values]>
            var table: Dictionary<Int64, ManagedObject>.Values.Iterator?
            var unsaved: IndexingIterator<[ManagedObject]>

            mutating func next() -> ManagedObject? {
                while true {
                    if let object = table?.next() { return object }
                    guard let next = tables.next() else { return unsaved.next() }
                    table = next.makeIterator()
                }
            }
        }
    }
}
