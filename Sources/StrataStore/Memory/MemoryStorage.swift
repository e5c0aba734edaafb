import Foundation
import StrataModel

/// The state and logic shared by ``InMemoryStore`` and ``BinaryStore``:
/// rows per entity hierarchy, link tables, and the fetch and save logic.
///
/// A value type: a store actor owns one and mutates it in place; the binary
/// store saves into a copy and keeps it only once the file is written.
/// Fetches run ``FetchEvaluator`` over the rows through
/// ``MemoryRowAccessor``, so their results are the evaluator's, exactly.
struct MemoryStorage: Sendable {
    /// The store's identifier (permanent IDs carry it).
    let identifier: String
    /// Where everything lives.
    let layout: MemoryLayout
    /// Rows by hierarchy root.
    private(set) var tables: [String: RowTable]
    /// Link tables by owning slot.
    private(set) var links: [StorageSlot: LinkTable]
    /// Derived: for each indexed to-one slot, the rows pointing at each
    /// destination primary key (deleted destinations included), in their
    /// owner's order (ordered) or by key.
    private(set) var children: [StorageSlot: [Int64: [Int64]]] = [:]
    /// Derived: for each uniqueness constraint (by index into the layout's
    /// list), the rows holding each non-nil combination of its values.
    /// Lists, because a file may hold duplicates (a constraint added to the
    /// model later is not part of the version hash).
    private(set) var uniqueness: [[[PropertyValue]: [Int64]]] = []

    /// The model.
    var model: ObjectModel { layout.model }

    /// An empty store.
    init(identifier: String, layout: MemoryLayout) {
        self.identifier = identifier
        self.layout = layout
        self.tables = Dictionary(uniqueKeysWithValues: layout.roots.map { ($0, RowTable()) })
        self.links = layout.links.mapValues { LinkTable(forwardOrdered: $0.forwardOrdered, reverseOrdered: $0.reverseOrdered) }
        self.uniqueness = Array(repeating: [:], count: layout.constraints.count)
    }

    /// A store loaded from a file: tables and links as read (missing ones
    /// start empty); the child indexes are rebuilt from the rows.
    init(identifier: String, layout: MemoryLayout, tables: [String: RowTable], links: [StorageSlot: LinkTable]) {
        self.init(identifier: identifier, layout: layout)
        for (root, table) in tables where self.tables[root] != nil { self.tables[root] = table }
        for (slot, table) in links where self.links[slot] != nil { self.links[slot] = table }
        rebuildChildIndexes()
        rebuildUniquenessIndexes()
    }

    // MARK: - Reading rows

    /// The row of `id`, when it exists in this store as an object of that
    /// entity or one of its subentities.
    func row(for id: ObjectID) -> (root: String, primaryKey: Int64, row: StoredRow)? {
        guard id.storeIdentifier == identifier, let pk = id.primaryKey, layout.entityNames.contains(id.entityName) else { return nil }
        let root = model.rootEntityName(of: id.entityName)
        guard let row = tables[root]?.rows[pk],
              row.entityName == id.entityName || model.isEntity(row.entityName, kindOf: id.entityName) else { return nil }
        return (root, pk, row)
    }

    /// The row at `primaryKey` in the hierarchy of `root`.
    func row(root: String, primaryKey: Int64) -> StoredRow? {
        tables[root]?.rows[primaryKey]
    }

    /// The permanent ID of a row.
    func objectID(entity: String, primaryKey: Int64) -> ObjectID {
        ObjectID(storeIdentifier: identifier, entityName: entity, key: .permanent(primaryKey))
    }

    /// The primary keys of the destinations of a to-many of the row at
    /// `primaryKey`, in order (ordered) or by key; empty for external or
    /// transient relationships.
    func destinationKeys(_ relationship: MemoryLayout.Relationship, of primaryKey: Int64) -> [Int64] {
        switch relationship.storage {
        case .inverseToOne(let slot, _):
            return children[slot]?[primaryKey] ?? []
        case .link(let slot, let forward):
            guard let table = links[slot] else { return [] }
            return (forward ? table.forward[primaryKey] : table.reverse[primaryKey]) ?? []
        case .toOne, .transient, .external:
            return []
        }
    }

    // MARK: - Mutating rows (the only ways rows change)

    /// Sets a hierarchy's primary-key counter.
    mutating func setLastPrimaryKey(_ key: Int64, root: String) {
        tables[root, default: RowTable()].lastPrimaryKey = key
    }

    /// Adds a row and indexes its to-ones.
    mutating func insertRow(_ row: StoredRow, root: String, primaryKey: Int64) {
        tables[root, default: RowTable()].rows[primaryKey] = row
        for constraint in layout.constraintsCovering[row.entityName] ?? [] {
            indexUniqueness(constraint, row: row, primaryKey: primaryKey, adding: true)
        }
        for (name, slot) in layout.indexedToOnes[row.entityName] ?? [:] {
            if case .object(let parent)? = row.values[name], let parentKey = parent.primaryKey {
                attach(primaryKey, to: parentKey, slot: slot)
            }
        }
    }

    /// Removes a row, its links and its place in child indexes. Rows whose
    /// to-one points at it keep that value (the context nullifies inverses;
    /// a to-one without inverse is left dangling, as in SQLite), and stay
    /// indexed under the removed key (see ``MemoryRowAccessor``); keys are
    /// never reused, so a dangling value never finds another row.
    mutating func removeRow(root: String, primaryKey: Int64) {
        guard let row = tables[root]?.rows.removeValue(forKey: primaryKey) else { return }
        for constraint in layout.constraintsCovering[row.entityName] ?? [] {
            indexUniqueness(constraint, row: row, primaryKey: primaryKey, adding: false)
        }
        for (name, slot) in layout.indexedToOnes[row.entityName] ?? [:] {
            if case .object(let parent)? = row.values[name], let parentKey = parent.primaryKey {
                detach(primaryKey, from: parentKey, slot: slot)
            }
        }
        for (slot, spec) in layout.links where spec.sourceRoot == root || spec.destinationRoot == root {
            if spec.sourceRoot == root { links[slot]?.setDestinations(of: primaryKey, to: []) }
            if spec.destinationRoot == root { links[slot]?.setSources(of: primaryKey, to: []) }
        }
    }

    /// Sets an attribute value (`.null` removes it).
    mutating func setAttribute(_ name: String, to value: PropertyValue, root: String, primaryKey: Int64) {
        guard let row = tables[root]?.rows[primaryKey] else { return }
        let constraints = layout.constraintsNaming[row.entityName]?[name] ?? []
        for constraint in constraints { indexUniqueness(constraint, row: row, primaryKey: primaryKey, adding: false) }
        if value.isNull {
            tables[root]?.rows[primaryKey]?.values[name] = nil
        } else {
            tables[root]?.rows[primaryKey]?.values[name] = value
        }
        guard !constraints.isEmpty, let changed = tables[root]?.rows[primaryKey] else { return }
        for constraint in constraints { indexUniqueness(constraint, row: changed, primaryKey: primaryKey, adding: true) }
    }

    /// The rows holding these values of a uniqueness constraint.
    func rows(withUniqueValues key: [PropertyValue], constraint: Int) -> [Int64] {
        uniqueness.indices.contains(constraint) ? uniqueness[constraint][key] ?? [] : []
    }

    /// The comparable form of a constraint's values, or nil when one is nil
    /// (nil never clashes, as in a SQL `UNIQUE` index). Strings and URIs
    /// compare by their UTF-8 bytes (SQLite's `BINARY` collation), decimals
    /// numerically (they are stored normalised), to-ones by destination row.
    static func uniquenessKey(_ values: [PropertyValue]) -> [PropertyValue]? {
        var key: [PropertyValue] = []
        key.reserveCapacity(values.count)
        for value in values {
            switch value {
            case .null:
                return nil
            case .string(let text), .uri(let text):
                key.append(.binary(Data(text.utf8)))
            case .object(let id):
                key.append(.object(ObjectID(storeIdentifier: "", entityName: "", key: id.key)))
            default:
                key.append(value)
            }
        }
        return key
    }

    private mutating func indexUniqueness(_ constraint: Int, row: StoredRow, primaryKey: Int64, adding: Bool) {
        guard uniqueness.indices.contains(constraint),
              let key = Self.uniquenessKey(layout.constraints[constraint].properties.map { row.values[$0] ?? .null }) else { return }
        if adding {
            let position = SortedInsertion.index(in: uniqueness[constraint][key] ?? []) { $0 < primaryKey }
            uniqueness[constraint][key, default: []].insert(primaryKey, at: position)
        } else {
            uniqueness[constraint][key]?.removeAll { $0 == primaryKey }
            if uniqueness[constraint][key]?.isEmpty == true { uniqueness[constraint][key] = nil }
        }
    }

    private mutating func rebuildUniquenessIndexes() {
        uniqueness = Array(repeating: [:], count: layout.constraints.count)
        for (index, constraint) in layout.constraints.enumerated() {
            for (key, row) in tables[constraint.root]?.rows ?? [:] where constraint.covered.contains(row.entityName) {
                indexUniqueness(index, row: row, primaryKey: key, adding: true)
            }
        }
    }

    /// Sets the row's version.
    mutating func setVersion(_ version: Int64, root: String, primaryKey: Int64) {
        tables[root]?.rows[primaryKey]?.version = version
    }

    /// Sets a to-one (`.object(permanentID)` or `.null`), keeping child
    /// indexes current. A row joining an ordered owner's list goes last.
    mutating func setToOne(_ name: String, to value: PropertyValue, root: String, primaryKey: Int64) {
        guard let row = tables[root]?.rows[primaryKey] else { return }
        let old = row.values[name]
        if old == value || (old == nil && value.isNull) { return }
        setAttribute(name, to: value, root: root, primaryKey: primaryKey)
        guard let slot = layout.indexedToOnes[row.entityName]?[name], let index = layout.childIndexes[slot] else { return }
        if case .object(let parent)? = old, let parentKey = parent.primaryKey {
            detach(primaryKey, from: parentKey, slot: slot)
        }
        tables[root]?.rows[primaryKey]?.orderKeys[name] = nil
        guard case .object(let parent) = value, let parentKey = parent.primaryKey else { return }
        if index.ordered {
            let last = (children[slot]?[parentKey] ?? []).last
                .flatMap { tables[index.childRoot]?.rows[$0]?.orderKeys[name] } ?? -1
            let (next, overflow) = last.addingReportingOverflow(1)
            tables[root]?.rows[primaryKey]?.orderKeys[name] = overflow ? Int64.max : next
        }
        attach(primaryKey, to: parentKey, slot: slot)
    }

    /// Replaces the destinations of a to-many of the row `owner` (an object
    /// of `ownerEntity` at `ownerKey`) with rows of the destination hierarchy.
    mutating func setToMany(_ name: String, of owner: ObjectID, ownerKey: Int64, to destinations: [Int64]) {
        guard let relationship = layout.relationship(name, of: owner.entityName) else { return }
        var seen: Set<Int64> = []
        let list = destinations.filter { seen.insert($0).inserted }
        switch relationship.storage {
        case .inverseToOne(let slot, let ordered):
            let childRoot = relationship.destinationRoot
            let keep = Set(list)
            for child in children[slot]?[ownerKey] ?? [] where !keep.contains(child) {
                setToOne(slot.name, to: .null, root: childRoot, primaryKey: child)
            }
            for child in list {
                setToOne(slot.name, to: .object(owner), root: childRoot, primaryKey: child)
            }
            if ordered {
                for (position, child) in list.enumerated() {
                    tables[childRoot]?.rows[child]?.orderKeys[slot.name] = Int64(position)
                }
                children[slot, default: [:]][ownerKey] = list.isEmpty ? nil : list
            }
        case .link(let slot, let forward):
            if forward {
                links[slot]?.setDestinations(of: ownerKey, to: list)
            } else {
                links[slot]?.setSources(of: ownerKey, to: list)
            }
        case .toOne, .transient, .external:
            break
        }
    }

    // MARK: - Child indexes

    private mutating func attach(_ child: Int64, to parent: Int64, slot: StorageSlot) {
        guard let index = layout.childIndexes[slot] else { return }
        let key = sortKey(child, index: index)
        let position = SortedInsertion.index(in: children[slot]?[parent] ?? []) { sortKey($0, index: index) < key }
        // In place: copying the list out and back would copy it whole.
        children[slot, default: [:]][parent, default: []].insert(child, at: position)
    }

    private mutating func detach(_ child: Int64, from parent: Int64, slot: StorageSlot) {
        children[slot]?[parent]?.removeAll { $0 == child }
        if children[slot]?[parent]?.isEmpty == true { children[slot]?[parent] = nil }
    }

    private func sortKey(_ child: Int64, index: MemoryLayout.ChildIndex) -> (Int64, Int64) {
        let order = index.ordered ? (tables[index.childRoot]?.rows[child]?.orderKeys[index.slot.name] ?? Int64.max) : 0
        return (order, child)
    }

    private mutating func rebuildChildIndexes() {
        children = [:]
        for (slot, index) in layout.childIndexes {
            var lists: [Int64: [(order: Int64, key: Int64)]] = [:]
            for (key, row) in tables[index.childRoot]?.rows ?? [:] {
                guard layout.indexedToOnes[row.entityName]?[slot.name] == slot,
                      case .object(let parent)? = row.values[slot.name], let parentKey = parent.primaryKey else { continue }
                lists[parentKey, default: []].append((index.ordered ? row.orderKeys[slot.name] ?? Int64.max : 0, key))
            }
            children[slot] = lists.mapValues { entries in
                entries.sorted { $0.order != $1.order ? $0.order < $1.order : $0.key < $1.key }.map(\.key)
            }
        }
    }
}
