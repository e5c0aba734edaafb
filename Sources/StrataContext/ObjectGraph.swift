import Foundation
import StrataModel
import StrataStore

/// The objects a context has registered and their unsaved changes.
///
/// Owned by one ``Context`` and used only inside its isolation, together
/// with the ``ManagedObject``s that point back to it; neither is `Sendable`.
final class ObjectGraph {
    let model: ObjectModel
    let transformers: ValueTransformerRegistry
    let transientRules: [String: [String: TransientRule]]
    private(set) var registered = ObjectRegistry()
    /// Objects that may have unsaved changes, in the order they first got
    /// one (see ``enroll(_:)``); ``changedObjects`` drops the others.
    private var enrolled: [ManagedObject] = []
    /// Bumped by every write to an object's change properties or
    /// registration (see ``noteChange(_:)``).
    private var mutations: UInt64 = 0
    /// ``mutations`` when ``changedObjects`` last dropped what it had to.
    private var checkedAt: UInt64 = .max
    /// Objects ``unenrollSaved(_:)`` took off since ``finishUnenrolling()``.
    private var unenrolledCount = 0
    /// See ``referenceHolders``.
    private var holders: [ManagedObject] = []
    /// Attribute lookups by entity, built on first use (see ``EntityLayout``).
    private var layouts: [String: EntityLayout] = [:]

    /// Layouts shared with the coordinator's other contexts (nil: this graph's own).
    private let sharedLayouts: ModelCache<EntityLayout>?

    init(model: ObjectModel, transformers: ValueTransformerRegistry, transientRules: [String: [String: TransientRule]], sharedLayouts: ModelCache<EntityLayout>? = nil) {
        self.model = model
        self.transformers = transformers
        self.transientRules = transientRules
        self.sharedLayouts = sharedLayouts
    }

    /// The rule computing a transient attribute of an entity (or an ancestor), if any.
    func transientRule(_ attribute: String, entity: String) -> TransientRule? {
        for name in model.ancestry(of: entity).reversed() {
            if let rule = transientRules[name]?[attribute] { return rule }
        }
        return nil
    }

    /// A transient attribute's value, computed by its rule when not cached;
    /// nil when it needs values of a fault.
    func transientValue(of object: ManagedObject, _ attribute: AttributeDescription) -> PropertyValue? {
        if let value = object.transients[attribute.name] { return value }
        guard let rule = transientRule(attribute.name, entity: object.entityName) else {
            return object.isInserted ? attribute.defaultValue : .null
        }
        var inputs: [String: PropertyValue] = [:]
        for key in rule.dependencies {
            if let attribute = model.attribute(named: key, in: object.entityName), attribute.isTransient {
                inputs[key] = object.transients[key] ?? .null
            } else {
                guard let value = currentValue(of: object, forKey: key) else { return nil }
                inputs[key] = value
            }
        }
        let value = rule.compute(inputs)
        object.transients[attribute.name] = value
        return value
    }

    /// Clears cached transients computed from `key`.
    private func invalidateTransients(of object: ManagedObject, dependingOn key: String) {
        guard !transientRules.isEmpty, !object.transients.isEmpty else { return }
        for name in model.ancestry(of: object.entityName) {
            for (attribute, rule) in transientRules[name] ?? [:] where rule.dependencies.contains(key) {
                object.transients[attribute] = nil
            }
        }
    }

    /// The layout of an entity.
    func layout(ofEntity entity: String) -> EntityLayout {
        if let cached = layouts[entity] { return cached }
        let model = self.model
        let layout = sharedLayouts?.value(for: entity) { EntityLayout(entity: entity, model: model) } ?? EntityLayout(entity: entity, model: model)
        layouts[entity] = layout
        return layout
    }

    /// The layout of an object's entity, kept on the object after the first use.
    func layout(of object: ManagedObject) -> EntityLayout {
        if let layout = object.layout { return layout }
        let layout = layout(ofEntity: object.entityName)
        object.layout = layout
        return layout
    }

    // MARK: Registry

    /// The registered object for an ID, registering a fault when unknown.
    func object(for id: ObjectID) -> ManagedObject {
        let object: ManagedObject
        switch id.key {
        case .permanent(let key):
            object = registered.savedObject(for: id, key: key) { ManagedObject(objectID: id, storeIdentifier: id.storeIdentifier, graph: self) }
        case .temporary:
            if let registered = registered.object(for: id) { return registered }
            object = ManagedObject(objectID: id, storeIdentifier: id.storeIdentifier, graph: self)
            registered.insert(object)
        }
        object.isRegistered = true
        return object
    }

    /// The registered object for an ID, if any.
    func registeredObject(for id: ObjectID) -> ManagedObject? {
        registered.object(for: id)
    }

    /// Registers an object (`isNew`: just inserted, with a fresh temporary ID).
    func register(_ object: ManagedObject, isNew: Bool = false) {
        registered.insert(object, isNew: isNew)?.isRegistered = false
        object.isRegistered = true
        if object.hasChanges, !object.isEnrolled { enroll(object) }
    }

    /// Forgets an object.
    func unregister(_ id: ObjectID) {
        registered.remove(id)?.isRegistered = false
    }

    /// Notes that an object may have changes (its change properties were
    /// written); called once per object until ``changedObjects`` drops it.
    func enroll(_ object: ManagedObject) {
        object.isEnrolled = true
        enrolled.append(object)
        mutations &+= 1
    }

    /// Called by a save for an object it left without changes, once its
    /// last write: marks it off the enrolled list, which
    /// ``finishUnenrolling()`` then shortens. No write to any object may
    /// come between the two (it would enroll the object a second time).
    func unenrollSaved(_ object: ManagedObject) {
        guard object.isEnrolled, !object.hasChanges else { return }
        object.isEnrolled = false
        unenrolledCount += 1
    }

    /// Drops the objects ``unenrollSaved(_:)`` marked from the enrolled
    /// list: when they are the whole list (a save of every change, such as
    /// a bulk insert), the list is emptied without looking at each object
    /// again; otherwise the unmarked ones stay.
    func finishUnenrolling() {
        guard unenrolledCount > 0 else { return }
        if unenrolledCount == enrolled.count {
            enrolled.removeAll()
        } else {
            enrolled.removeAll { !$0.isEnrolled }
        }
        unenrolledCount = 0
        mutations &+= 1
    }

    /// Called by an object whose change properties or registration changed:
    /// enrolls it, and makes the next ``changedObjects`` look again.
    func noteChange(_ object: ManagedObject) {
        mutations &+= 1
        if !object.isEnrolled { enroll(object) }
    }

    /// Called by an object registered or unregistered: the next
    /// ``changedObjects`` looks again, and a newly registered object that
    /// can hold object IDs (its entity's, or cached fetched results) joins
    /// ``referenceHolders``.
    func noteRegistration(of object: ManagedObject) {
        mutations &+= 1
        if object.isRegistered, !object.isReferenceHolder, !object.fetchedCache.isEmpty || layout(of: object).holdsObjectIDs {
            addReferenceHolder(object)
        }
    }

    /// Adds an object to ``referenceHolders``.
    func addReferenceHolder(_ object: ManagedObject) {
        object.isReferenceHolder = true
        holders.append(object)
    }

    /// The registered objects that may hold object IDs: those of entities
    /// with ``EntityLayout/referenceKeys``, and those with cached fetched
    /// results. Rewriting IDs after a save, merging and dropping references
    /// visit these instead of every registered object.
    var referenceHolders: [ManagedObject] {
        if holders.contains(where: { !$0.isRegistered }) {
            holders.removeAll { object in
                if object.isRegistered { return false }
                object.isReferenceHolder = false
                return true
            }
        }
        return holders
    }

    /// Makes room for `additional` more registered objects of `id`'s store and entity.
    func reserveCapacity(_ additional: Int, like id: ObjectID) {
        registered.reserveCapacity(additional, like: id)
    }

    /// Forgets every object.
    func removeAll() {
        for object in registered.values { object.isRegistered = false }
        registered.removeAll()
        for object in enrolled { object.isEnrolled = false }
        enrolled.removeAll()
        for object in holders { object.isReferenceHolder = false }
        holders.removeAll()
    }

    /// Re-keys an object after its save gave it a permanent ID.
    func changeID(of object: ManagedObject, to id: ObjectID) {
        changeIDs([(object, id)])
        // A single re-key registers the object even if it was not.
        if registered.object(for: id) !== object { register(object) }
    }

    /// Re-keys many objects at once (after a save).
    func changeIDs(_ changes: [(ManagedObject, ObjectID)]) {
        guard !changes.isEmpty else { return }
        // Objects edited meanwhile are enrolled already: every write enrolls.
        for previous in registered.changeIDs(changes) { previous.isRegistered = false }
    }

    /// Registered objects with unsaved changes, in the order they first
    /// got one (inserted objects in insertion order). Every write to an
    /// object's change properties enrolls it, so no registered object with
    /// changes is missing; the others are dropped here.
    var changedObjects: [ManagedObject] {
        // The save's steps ask several times in a row with nothing changed
        // in between: then the list is returned without a look at every
        // object (a walk over 100,000 objects costs milliseconds in cache
        // misses), and with nothing to drop it is returned as it is.
        if checkedAt == mutations { return enrolled }
        defer { checkedAt = mutations }
        guard let first = enrolled.firstIndex(where: { !$0.isRegistered || !$0.hasChanges }) else { return enrolled }
        var kept: [ManagedObject] = []
        kept.reserveCapacity(enrolled.count)
        kept.append(contentsOf: enrolled[..<first])
        for object in enrolled[first...] {
            if object.isRegistered, object.hasChanges {
                kept.append(object)
            } else {
                object.isEnrolled = false
            }
        }
        enrolled = kept
        return kept
    }

    // MARK: Reading

    /// The current value of a persisted attribute or to-one; nil when not known (fault).
    func currentValue(of object: ManagedObject, forKey key: String) -> PropertyValue? {
        if let value = object.changes[key] { return value }
        if object.isInserted { return .null }
        guard let committed = object.committed else { return nil }
        return committed[key] ?? .null
    }

    /// The current destinations of a to-many; nil when not loaded.
    func currentList(of object: ManagedObject, forKey key: String) -> [ObjectID]? {
        let change = object.toManyChanges[key]
        let base: [ObjectID]
        if object.isInserted {
            base = []
        } else if let committed = object.committedToMany[key] {
            base = committed
        } else if case .replaced(let list) = change {
            return list
        } else {
            return nil
        }
        return change?.applied(to: base) ?? base
    }

    func value(of object: ManagedObject, forKey key: String) throws -> PropertyValue {
        if let attribute = model.attribute(named: key, in: object.entityName) {
            if attribute.isTransient {
                guard let value = transientValue(of: object, attribute) else { throw faultError(object) }
                return value
            }
            guard let value = currentValue(of: object, forKey: key) else { throw faultError(object) }
            return value
        }
        if let relationship = model.relationship(named: key, in: object.entityName) {
            guard !relationship.isToMany else {
                throw StrataError(.invalidValue, "'\(object.entityName).\(key)' is a to-many relationship: read it with destinations(of:_:)")
            }
            if relationship.isTransient { return object.transients[key] ?? .null }
            guard let value = currentValue(of: object, forKey: key) else { throw faultError(object) }
            return value
        }
        throw unknownKey(key, object)
    }

    func destinationIDs(of object: ManagedObject, forKey key: String) throws -> [ObjectID] {
        let relationship = try toManyRelationship(key, of: object)
        if relationship.isTransient, case .objects(let ids)? = object.transients[key] { return ids }
        guard let list = currentList(of: object, forKey: key) else {
            throw StrataError(.invalidValue, "'\(object.entityName).\(key)' of \(object.objectID) is not loaded: use destinations(of:_:) on the context")
        }
        return list
    }

    // MARK: Writing attributes and to-one relationships

    func setValue(_ value: PropertyValue, of object: ManagedObject, forKey key: String) throws {
        guard !object.isDeleted else {
            throw StrataError(.invalidValue, "\(object.objectID) was deleted: cannot set '\(key)'")
        }
        let entityLayout = layout(of: object)
        if let attribute = entityLayout.attribute(named: key) {
            let checked = try Self.checked(value, type: attribute.type, name: attribute.name, entity: object.entityName)
            if attribute.isTransient {
                object.transients[key] = checked
            } else {
                guard object.isInserted || object.committed != nil else { throw faultError(object) }
                if let slot = attribute.slot, object.isInserted {
                    // An inserted object has nothing committed to compare with.
                    object.changes[key, slot: slot, in: entityLayout.values] = checked
                } else {
                    setRaw(object, key, checked)
                }
            }
            invalidateTransients(of: object, dependingOn: key)
            return
        }
        guard let relationship = model.relationship(named: key, in: object.entityName) else {
            throw unknownKey(key, object)
        }
        guard !relationship.isToMany else {
            throw StrataError(.invalidValue, "'\(object.entityName).\(key)' is a to-many relationship: use setDestinations(_:forKey:)")
        }
        let newID = try destinationID(value, for: relationship, entity: object.entityName)
        if relationship.isTransient {
            object.transients[key] = newID.map { .object($0) } ?? .null
            return
        }
        guard object.isInserted || object.committed != nil else { throw faultError(object) }
        try setToOne(object, relationship, newID)
    }

    /// Sets a to-one and keeps its inverse consistent.
    private func setToOne(_ object: ManagedObject, _ relationship: RelationshipDescription, _ newID: ObjectID?) throws {
        let key = relationship.name
        let oldID: ObjectID? = {
            if case .object(let id)? = currentValue(of: object, forKey: key) { return id }
            return nil
        }()
        guard oldID != newID else { return }
        setRaw(object, key, newID.map { .object($0) } ?? .null)
        guard let inverse = model.inverse(of: relationship), !inverse.isTransient else { return }
        if let oldID { detach(object.objectID, from: self.object(for: oldID), inverse) }
        if let newID {
            let destination = self.object(for: newID)
            if !inverse.isToMany {
                switch currentValue(of: destination, forKey: inverse.name) {
                case .object(let previous)? where previous != object.objectID:
                    setRaw(self.object(for: previous), key, .null)
                case nil:
                    // The destination is a fault: its previous owner is
                    // unknown here, so clear every registered holder.
                    for other in referenceHolders where other !== object && currentValue(of: other, forKey: key) == .object(newID) {
                        setRaw(other, key, .null)
                    }
                default:
                    break
                }
            }
            attach(object.objectID, to: destination, inverse)
        }
    }

    // MARK: Writing to-many relationships

    func setDestinations(_ ids: [ObjectID], of object: ManagedObject, forKey key: String) throws {
        let relationship = try writableToMany(key, of: object)
        for id in ids { _ = try destinationID(.object(id), for: relationship, entity: object.entityName) }
        var unique: [ObjectID] = []
        for id in ids where !unique.contains(id) { unique.append(id) }
        if relationship.isTransient {
            object.transients[key] = .objects(unique)
            return
        }
        guard let old = currentList(of: object, forKey: key) else {
            throw StrataError(.invalidValue, "'\(object.entityName).\(key)' of \(object.objectID) is not loaded: load it with destinations(of:_:) before replacing it")
        }
        object.toManyChanges[key] = .replaced(unique)
        let inverse = model.inverse(of: relationship)
        for id in old where !unique.contains(id) {
            if let inverse { detach(object.objectID, from: self.object(for: id), inverse) }
        }
        for id in unique where !old.contains(id) {
            if let inverse { claim(id, for: object, relationship, inverse) }
        }
    }

    func addDestination(_ id: ObjectID, to object: ManagedObject, forKey key: String) throws {
        let relationship = try writableToMany(key, of: object)
        _ = try destinationID(.object(id), for: relationship, entity: object.entityName)
        if relationship.isTransient {
            var list: [ObjectID] = []
            if case .objects(let ids)? = object.transients[key] { list = ids }
            if !list.contains(id) { list.append(id) }
            object.transients[key] = .objects(list)
            return
        }
        if currentList(of: object, forKey: key)?.contains(id) == true { return }
        addRaw(object, key, id)
        if let inverse = model.inverse(of: relationship) { claim(id, for: object, relationship, inverse) }
    }

    func removeDestination(_ id: ObjectID, from object: ManagedObject, forKey key: String) throws {
        let relationship = try writableToMany(key, of: object)
        if relationship.isTransient {
            if case .objects(let ids)? = object.transients[key] { object.transients[key] = .objects(ids.filter { $0 != id }) }
            return
        }
        removeRaw(object, key, id)
        if let inverse = model.inverse(of: relationship) { detach(object.objectID, from: self.object(for: id), inverse) }
    }

    /// Removes a destination from a loaded to-many without touching the inverse.
    func removeDestinationRaw(_ id: ObjectID, from object: ManagedObject, forKey key: String) throws {
        removeRaw(object, key, id)
    }

    // MARK: Inverse maintenance

    /// `owner.relationship` gained `id`: point `id`'s inverse at `owner`,
    /// taking it away from its previous owner for a to-one inverse.
    private func claim(_ id: ObjectID, for owner: ManagedObject, _ relationship: RelationshipDescription, _ inverse: RelationshipDescription) {
        let destination = object(for: id)
        if inverse.isToMany {
            addRaw(destination, inverse.name, owner.objectID)
            return
        }
        switch currentValue(of: destination, forKey: inverse.name) {
        case .object(let previous)? where previous != owner.objectID:
            let previousOwner = object(for: previous)
            if relationship.isToMany { removeRaw(previousOwner, relationship.name, id) } else { setRaw(previousOwner, relationship.name, .null) }
        case nil:
            // The destination is a fault: its previous owner is unknown, so
            // take it out of every loaded list that holds it.
            for other in referenceHolders where other !== owner && model.isEntity(other.entityName, kindOf: inverse.destinationEntityName) {
                if relationship.isToMany, currentList(of: other, forKey: relationship.name)?.contains(id) == true {
                    removeRaw(other, relationship.name, id)
                }
            }
        default:
            break
        }
        setRaw(destination, inverse.name, .object(owner.objectID))
    }

    /// `ownerID` no longer relates to `destination` through `inverse`'s partner.
    private func detach(_ ownerID: ObjectID, from destination: ManagedObject, _ inverse: RelationshipDescription) {
        if inverse.isToMany {
            removeRaw(destination, inverse.name, ownerID)
        } else {
            let current = currentValue(of: destination, forKey: inverse.name)
            if current == nil || current == .object(ownerID) { setRaw(destination, inverse.name, .null) }
        }
    }

    /// Attaches `ownerID` to `destination` through `inverse`.
    private func attach(_ ownerID: ObjectID, to destination: ManagedObject, _ inverse: RelationshipDescription) {
        if inverse.isToMany { addRaw(destination, inverse.name, ownerID) } else { setRaw(destination, inverse.name, .object(ownerID)) }
    }

    /// Removes every reference to objects that no longer exist: to-one
    /// values become nil, lists lose them.
    func dropReferences(to gone: Set<ObjectID>) {
        guard !gone.isEmpty else { return }
        for object in referenceHolders {
            for (key, value) in object.changes {
                if case .object(let id) = value, gone.contains(id) { object.changes[key] = .null }
            }
            if let committed = object.committed {
                for (key, value) in committed {
                    if case .object(let id) = value, gone.contains(id) { setRaw(object, key, .null) }
                }
            }
            for (key, list) in object.committedToMany where list.contains(where: gone.contains) {
                object.committedToMany[key] = list.filter { !gone.contains($0) }
            }
            for (key, change) in object.toManyChanges {
                switch change {
                case .replaced(let list):
                    object.toManyChanges[key] = .replaced(list.filter { !gone.contains($0) })
                case .delta(let added, let removed):
                    object.toManyChanges[key] = .delta(added: added.filter { !gone.contains($0) }, removed: removed)
                }
            }
        }
    }

    // MARK: Raw changes (no inverse maintenance)

    func setRaw(_ object: ManagedObject, _ key: String, _ value: PropertyValue) {
        if !object.isInserted, !object.keepsUnchangedValues, let committed = object.committed, (committed[key] ?? .null) == value {
            object.changes[key] = nil
        } else {
            object.changes[key] = value
        }
    }

    private func addRaw(_ object: ManagedObject, _ key: String, _ id: ObjectID) {
        switch object.toManyChanges[key] {
        case .replaced(let list)?:
            if !list.contains(id) { object.toManyChanges[key] = .replaced(list + [id]) }
        case .delta(var added, var removed)?:
            removed.remove(id)
            if !added.contains(id) { added.append(id) }
            object.toManyChanges[key] = .delta(added: added, removed: removed)
        case nil:
            // A delta, not a copy of the list: when the stored list changes
            // (a merge, a refresh, a conflict), the change applies on top.
            if currentList(of: object, forKey: key)?.contains(id) == true { return }
            object.toManyChanges[key] = .delta(added: [id], removed: [])
        }
    }

    private func removeRaw(_ object: ManagedObject, _ key: String, _ id: ObjectID) {
        switch object.toManyChanges[key] {
        case .replaced(let list)?:
            if list.contains(id) { object.toManyChanges[key] = .replaced(list.filter { $0 != id }) }
        case .delta(var added, var removed)?:
            added.removeAll { $0 == id }
            removed.insert(id)
            object.toManyChanges[key] = .delta(added: added, removed: removed)
        case nil:
            if let list = currentList(of: object, forKey: key), !list.contains(id) { return }
            object.toManyChanges[key] = .delta(added: [], removed: [id])
        }
    }

    // MARK: Checks

    private func toManyRelationship(_ key: String, of object: ManagedObject) throws -> RelationshipDescription {
        guard let relationship = model.relationship(named: key, in: object.entityName) else { throw unknownKey(key, object) }
        guard relationship.isToMany else {
            throw StrataError(.invalidValue, "'\(object.entityName).\(key)' is a to-one relationship: use value(forKey:)")
        }
        return relationship
    }

    private func writableToMany(_ key: String, of object: ManagedObject) throws -> RelationshipDescription {
        guard !object.isDeleted else {
            throw StrataError(.invalidValue, "\(object.objectID) was deleted: cannot change '\(key)'")
        }
        return try toManyRelationship(key, of: object)
    }

    private func destinationID(_ value: PropertyValue, for relationship: RelationshipDescription, entity: String) throws -> ObjectID? {
        switch value {
        case .null:
            return nil
        case .object(let id):
            guard model.isEntity(id.entityName, kindOf: relationship.destinationEntityName) else {
                throw StrataError(.invalidValue, "'\(entity).\(relationship.name)' takes \(relationship.destinationEntityName) objects, not \(id.entityName) (\(id))")
            }
            return id
        default:
            throw StrataError(.invalidValue, "'\(entity).\(relationship.name)' takes an object ID or nil, not \(value)")
        }
    }

    func faultError(_ object: ManagedObject) -> StrataError {
        StrataError(.invalidValue, "\(object.objectID) is a fault: load it with context.load(_:) (or fetch it) before reading or changing its values")
    }

    private func unknownKey(_ key: String, _ object: ManagedObject) -> StrataError {
        StrataError(.invalidValue, "entity '\(object.entityName)' has no attribute or relationship '\(key)'")
    }
}
