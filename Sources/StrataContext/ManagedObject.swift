import StrataModel

/// A live object in a ``Context``: the values an app reads and changes.
///
/// A managed object belongs to one context and never leaves its isolation:
/// it is not `Sendable`. Work with objects inside ``Context/perform(_:)``
/// and hand ``ObjectID``s (which are `Sendable`) to other contexts.
///
/// An object is a *fault* until its values are loaded: reading a value of a
/// fault throws; ``Context/load(_:)`` (or any fetch that returns it) fills
/// it. To-many relationships load on access through
/// ``Context/destinations(of:_:)``.
public final class ManagedObject {
    /// The object's ID: temporary until the first save, then permanent.
    public internal(set) var objectID: ObjectID
    /// The object's entity.
    public let entityName: String
    /// The identifier of the store the object lives in (or will be saved to).
    public internal(set) var storeIdentifier: String

    unowned let graph: ObjectGraph
    /// The entity's attribute lookups, set by ``ObjectGraph/layout(of:)``.
    var layout: ObjectGraph.EntityLayout?

    /// The persisted values as last read from (or written to) the store;
    /// `nil` for a fault or a newly inserted object.
    var committed: PropertyValues?
    /// The version the committed values are at (0 when unknown or inserted).
    /// Any new version ends a rebase (see ``keepsUnchangedValues``).
    var version: Int64 = 0 {
        didSet { keepsUnchangedValues = false }
    }
    /// Set by ``Context/rebase(_:onVersion:values:)`` when the change set is
    /// based on another version than the committed values: a value set equal
    /// to a committed value is still a change (the client's base may have
    /// held another value), so the save checks the version and writes it.
    var keepsUnchangedValues = false
    /// Local changes to persisted attributes and to-one relationships.
    var changes = PropertyValues() {
        didSet {
            changeGeneration &+= 1
            graph.noteChange(self)
        }
    }
    /// Values of transient attributes.
    var transients: [String: PropertyValue] = [:]
    /// To-many destinations as read from the store, by relationship.
    var committedToMany: [String: [ObjectID]] = [:]
    /// Local changes to to-many relationships.
    var toManyChanges: [String: ToManyChange] = [:] {
        didSet {
            changeGeneration &+= 1
            graph.noteChange(self)
        }
    }
    /// Bumped by every write to ``changes`` or ``toManyChanges`` (the
    /// observers do not read the old value, so writes stay in place): a save
    /// compares it with the value it planned with to tell whether the object
    /// was edited while the save awaited its store.
    private(set) var changeGeneration: UInt64 = 0
    /// Cached results of fetched properties.
    var fetchedCache: [String: [ObjectID]] = [:] {
        didSet { if !isReferenceHolder, !fetchedCache.isEmpty { graph.addReferenceHolder(self) } }
    }
    /// Whether the object is in the graph's list of objects that may hold
    /// object IDs (kept by ``ObjectGraph``).
    var isReferenceHolder = false

    /// Whether the object was inserted and not saved yet.
    public internal(set) var isInserted = false {
        didSet { graph.noteChange(self) }
    }
    /// Whether the object was deleted and the delete not saved yet.
    public internal(set) var isDeleted = false {
        didSet { graph.noteChange(self) }
    }

    /// Whether the graph's registry maps ``objectID`` to this object (kept
    /// by ``ObjectGraph``).
    var isRegistered = false {
        didSet { if isRegistered != oldValue { graph.noteRegistration(of: self) } }
    }
    /// Whether the object is in the graph's list of objects that may have
    /// changes (kept by ``ObjectGraph``).
    var isEnrolled = false
    /// The object's position in its ``ObjectRegistry``'s list of inserted
    /// objects; -1 when it is not in that list.
    var registryPosition = -1

    init(objectID: ObjectID, storeIdentifier: String, graph: ObjectGraph) {
        self.objectID = objectID
        self.entityName = objectID.entityName
        self.storeIdentifier = storeIdentifier
        self.graph = graph
    }

    /// Whether the object's values are not loaded.
    public var isFault: Bool { committed == nil && !isInserted }

    /// Whether the object has unsaved changes to persisted properties.
    public var isUpdated: Bool {
        !isInserted && !isDeleted && (!changes.isEmpty || !toManyChanges.isEmpty)
    }

    /// Whether the object has any unsaved change (insert, update or delete).
    public var hasChanges: Bool { isInserted || isDeleted || isUpdated }

    /// The version of the persisted state the object is based on (0 until saved).
    public var persistedVersion: Int64 { version }

    /// The locally changed persisted values, by property name.
    public var changedValues: [String: PropertyValue] { changes.dictionary }

    /// The persisted values as last read from the store, every persisted
    /// attribute and to-one (`.null` for nil); empty for faults and
    /// inserted objects.
    public var committedValues: [String: PropertyValue] {
        // After a save the committed values are the insert's, which leave
        // out the keys never set: they are nil.
        guard var values = committed else { return [:] }
        for key in graph.layout(of: self).persistedKeys where values[key] == nil { values[key] = .null }
        return values.dictionary
    }

    // MARK: Reading

    /// The value of an attribute or to-one relationship (`.object(id)`),
    /// transient or persisted. Throws for unknown keys, for faults, and for
    /// to-many relationships (use ``Context/destinations(of:_:)``).
    public func value(forKey key: String) throws -> PropertyValue {
        try graph.value(of: self, forKey: key)
    }

    /// The value, or `.null` for unknown keys and faults. For code that has
    /// just fetched the object and knows the key.
    public subscript(key: String) -> PropertyValue {
        (try? value(forKey: key)) ?? .null
    }

    /// The destinations of a loaded (or inserted) to-many relationship; throws
    /// when it has not been loaded (use ``Context/destinations(of:_:)``).
    public func destinationIDs(forKey key: String) throws -> [ObjectID] {
        try graph.destinationIDs(of: self, forKey: key)
    }

    // MARK: Writing

    /// Sets an attribute or to-one relationship (`.object(id)` / `.null`),
    /// maintaining the inverse. The value is checked against the attribute's
    /// type; a wrong type throws and changes nothing.
    public func setValue(_ value: PropertyValue, forKey key: String) throws {
        try graph.setValue(value, of: self, forKey: key)
    }

    /// Replaces the destinations of a to-many relationship, maintaining inverses.
    public func setDestinations(_ ids: [ObjectID], forKey key: String) throws {
        try graph.setDestinations(ids, of: self, forKey: key)
    }

    /// Adds a destination to a to-many relationship, maintaining the inverse.
    public func addDestination(_ id: ObjectID, forKey key: String) throws {
        try graph.addDestination(id, to: self, forKey: key)
    }

    /// Removes a destination from a to-many relationship, maintaining the inverse.
    public func removeDestination(_ id: ObjectID, forKey key: String) throws {
        try graph.removeDestination(id, from: self, forKey: key)
    }
}

/// A local change to a to-many relationship.
enum ToManyChange {
    /// The whole list is known.
    case replaced([ObjectID])
    /// Additions and removals to apply to the (not yet loaded) stored list.
    case delta(added: [ObjectID], removed: Set<ObjectID>)

    /// Applies the change to a stored list.
    func applied(to base: [ObjectID]) -> [ObjectID] {
        switch self {
        case .replaced(let list):
            return list
        case .delta(let added, let removed):
            var result = base.filter { !removed.contains($0) }
            for id in added where !result.contains(id) { result.append(id) }
            return result
        }
    }
}
