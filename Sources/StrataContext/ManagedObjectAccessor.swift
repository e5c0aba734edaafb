import StrataModel
import StrataQuery

/// Reads managed objects for the in-memory evaluator (pending changes,
/// derived attributes, sorting merged results).
///
/// Objects that are faults and to-many relationships that are not loaded
/// cannot be read synchronously: the accessor records them in ``missing``
/// and answers nil / empty; the context then loads what was missing and
/// evaluates again (see `Context.evaluateLoading`).
struct ManagedObjectAccessor: ObjectGraphAccessor {
    typealias Object = ManagedObject

    let graph: ObjectGraph
    let missing: MissingData

    func value(_ attribute: AttributeDescription, of object: ManagedObject) -> PropertyValue {
        if attribute.isTransient {
            if let value = graph.transientValue(of: object, attribute) { return value }
            missing.note(fault: object)
            return .null
        }
        if let value = graph.currentValue(of: object, forKey: attribute.name) { return value }
        missing.note(fault: object)
        return .null
    }

    func destination(_ relationship: RelationshipDescription, of object: ManagedObject) -> ManagedObject? {
        guard let value = graph.currentValue(of: object, forKey: relationship.name) else {
            missing.note(fault: object)
            return nil
        }
        guard case .object(let id) = value, !missing.vanished.contains(id) else { return nil }
        let destination = graph.object(for: id)
        if destination.isFault { missing.note(fault: destination) }
        return destination
    }

    func destinations(_ relationship: RelationshipDescription, of object: ManagedObject) -> [ManagedObject] {
        guard let list = graph.currentList(of: object, forKey: relationship.name) else {
            if object.isFault { missing.note(fault: object) } else { missing.note(list: relationship.name, of: object) }
            return []
        }
        return list.compactMap { id in
            guard !missing.vanished.contains(id) else { return nil }
            let destination = graph.object(for: id)
            if destination.isFault { missing.note(fault: destination) }
            return destination
        }
    }

    func objectID(of object: ManagedObject) -> ObjectID { object.objectID }

    func entityName(of object: ManagedObject) -> String { object.entityName }

    func primaryKey(of object: ManagedObject) -> Int64? { object.objectID.primaryKey }
}

/// What an evaluation over managed objects could not read.
final class MissingData {
    private(set) var faults: [ObjectID: ManagedObject] = [:]
    private(set) var lists: [(ManagedObject, String)] = []
    /// Objects known to no longer exist in their store: read as nil.
    let vanished: Set<ObjectID>

    init(vanished: Set<ObjectID>) {
        self.vanished = vanished
    }

    var isEmpty: Bool { faults.isEmpty && lists.isEmpty }

    func note(fault object: ManagedObject) {
        if !vanished.contains(object.objectID) { faults[object.objectID] = object }
    }

    func note(list key: String, of object: ManagedObject) {
        if !lists.contains(where: { $0.0 === object && $0.1 == key }) { lists.append((object, key)) }
    }
}
