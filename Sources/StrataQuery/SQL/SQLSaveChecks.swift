import StrataModel

/// What every SQL store checks of a change set before writing it, with no
/// database access: the entities it holds, saved and unsaved IDs, values
/// that fit their attributes, relationships that stay in the store. Values
/// come out in their ``SQLValue`` form; each store converts them for its
/// driver. Errors name the store as `place` does (`store /path/file`,
/// `PostgreSQL store postgresql://…`).
///
/// A class: a store's save transactions share one, and its properties
/// are many references that a struct copy would retain one by one.
package final class SQLSaveChecks<Extras: Sendable>: Sendable {
    package typealias Entity = SQLStoreMapping<Extras>.Entity

    package let mapping: SQLStoreMapping<Extras>
    package let model: ObjectModel
    package let storeIdentifier: String
    /// The store, for messages.
    package let place: String
    /// Why a string holding U+0000 cannot be stored (nil: it can).
    package let refusedNUL: String?

    /// The checks of a store with `mapping` and `storeIdentifier`.
    package init(mapping: SQLStoreMapping<Extras>, storeIdentifier: String, place: String, refusedNUL: String? = nil) {
        self.mapping = mapping
        self.model = mapping.schema.model
        self.storeIdentifier = storeIdentifier
        self.place = place
        self.refusedNUL = refusedNUL
    }

    /// The held entity an ID names; 140104 (invalid value) naming an
    /// unknown entity or one the store does not hold.
    package func heldEntity(_ id: ObjectID) throws(StrataError) -> Entity {
        guard let entity = mapping.entities[id.entityName] else {
            if model.entity(named: id.entityName) == nil {
                throw StrataError(.invalidValue, "\(place): \(id) names unknown entity '\(id.entityName)'")
            }
            throw StrataError(.invalidValue, "\(place) does not hold entity '\(id.entityName)' (\(id))")
        }
        return entity
    }

    /// The entity and primary key of a saved object of this store, for `operation`.
    package func savedObject(_ id: ObjectID, operation: String) throws(StrataError) -> (Entity, Int64) {
        guard let key = id.primaryKey else {
            throw StrataError(.invalidValue, "\(place): cannot \(operation) \(id): it was never saved")
        }
        guard id.storeIdentifier == storeIdentifier else {
            throw StrataError(.storeSave, "\(place): cannot \(operation) \(id): it belongs to store \(id.storeIdentifier)")
        }
        return (try heldEntity(id), key)
    }

    /// A persisted to-many relationship of `entity`.
    package func toManyField(_ name: String, of entity: Entity) throws(StrataError) -> SQLStoreMapping<Extras>.ToManyField {
        guard let field = entity.toManys[name] else {
            throw StrataError(.invalidValue, "\(place): \(entity.name) has no persisted to-many relationship '\(name)'")
        }
        return field
    }

    /// An attribute's stored value: ``SQLAttributeEncoder``'s, and text
    /// holding U+0000 refused when the store cannot hold it.
    package func encode(_ value: PropertyValue, field: SQLStoreMapping<Extras>.AttributeField, entity: String) throws(StrataError) -> SQLValue {
        if case .null = value { return .null }
        let stored = try SQLAttributeEncoder.encode(value, type: field.type, entity: entity, attribute: field.name)
        if let refusedNUL, case .text(let text) = stored, SQLValueCoding.containsNUL(text) {
            throw StrataError(.invalidValue, "\(entity).\(field.name): \(refusedNUL)")
        }
        return stored
    }

    /// The column, stored value and pending temporary reference of one
    /// property value; nil for transient properties (ignored).
    package func encode(_ name: String, _ value: PropertyValue, of entity: Entity, object: ObjectID) throws(StrataError) -> (String, SQLValue, ObjectID?)? {
        if let i = entity.attributeIndex[name] {
            let field = entity.attributes[i]
            return (field.column, try encode(value, field: field, entity: entity.name), nil)
        }
        if let i = entity.toOneIndex[name] {
            let field = entity.toOnes[i]
            let (stored, pending) = try toOne(value, field: field, entity: entity)
            return (field.column, stored, pending)
        }
        if entity.transientNames.contains(name) { return nil }
        if entity.toManys[name] != nil {
            throw StrataError(.invalidValue, "\(entity.name).\(name) is a to-many relationship: pass its destinations in toMany, not in values")
        }
        throw StrataError(.invalidValue, "\(place): \(entity.name) has no persisted attribute or to-one relationship '\(name)' (object \(object))")
    }

    /// The stored form of a to-one value (and the temporary ID to resolve).
    package func toOne(_ value: PropertyValue, field: SQLStoreMapping<Extras>.ToOneField, entity: Entity) throws(StrataError) -> (SQLValue, ObjectID?) {
        switch value {
        case .null:
            return (.null, nil)
        case .object(let target):
            return try reference(target, destination: field.destination, entity: entity.name, property: field.name)
        default:
            throw StrataError(.invalidValue, "\(entity.name).\(field.name): \(value) is not an object ID")
        }
    }

    /// The stored key of a reference (NULL for now when temporary, with the
    /// temporary ID to resolve), after checking it can be stored here.
    package func reference(_ target: ObjectID, destination: String, entity: String, property: String) throws(StrataError) -> (SQLValue, ObjectID?) {
        guard mapping.schema.holds(destination) else {
            throw StrataError(.externalRelationship, "\(entity).\(property): \(destination) is not in \(place); a persisted relationship cannot cross stores (use a fetched property)")
        }
        guard target.entityName == destination || model.isEntity(target.entityName, kindOf: destination) else {
            throw StrataError(.invalidValue, "\(entity).\(property): \(target) is not a \(destination)")
        }
        switch target.key {
        case .temporary:
            return (.null, target)
        case .permanent(let key):
            guard target.storeIdentifier == storeIdentifier else {
                throw StrataError(.externalRelationship, "\(entity).\(property) refers to \(target), which is in another store than \(place)")
            }
            return (.integer(key), nil)
        }
    }

    /// The destinations of a to-many to store (none for a transient one),
    /// each checked as ``reference(_:destination:entity:property:)`` does.
    package func checkedDestinations(_ destinations: [ObjectID], field: SQLStoreMapping<Extras>.ToManyField, entity: Entity) throws(StrataError) -> [ObjectID] {
        switch field.storage {
        case .transient:
            return []
        case .external:
            guard destinations.isEmpty else {
                throw StrataError(.externalRelationship, "\(entity.name).\(field.name): \(field.destination) is not in \(place); a persisted relationship cannot cross stores (use a fetched property)")
            }
            return []
        default:
            for target in destinations {
                _ = try reference(target, destination: field.destination, entity: entity.name, property: field.name)
            }
            return destinations
        }
    }
}
