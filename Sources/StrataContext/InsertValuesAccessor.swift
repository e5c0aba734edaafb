import StrataModel
import StrataQuery

/// The values of one object being inserted directly, as derivations read
/// them: its own persisted attributes, nothing else (compiling a
/// derivation that reads more fails, and the entity does not qualify).
package struct InsertValuesAccessor: ObjectGraphAccessor {
    package struct Row {
        package var id: ObjectID
        package var values: PropertyValues

        package init(id: ObjectID, values: PropertyValues) {
            self.id = id
            self.values = values
        }
    }
    package typealias Object = Row

    package init() {}

    package func attributeKey(_ attribute: AttributeDescription, entity: String) throws(StrataError) -> AttributeDescription {
        guard !attribute.isTransient else {
            throw StrataError(.predicateType, "a direct insert does not compute transient '\(entity).\(attribute.name)'")
        }
        return attribute
    }

    package func relationshipKey(_ relationship: RelationshipDescription, entity: String) throws(StrataError) -> RelationshipDescription {
        throw StrataError(.predicateType, "a direct insert does not follow '\(entity).\(relationship.name)'")
    }

    package func value(_ attribute: AttributeDescription, of object: Row) -> PropertyValue {
        object.values[attribute.name] ?? .null
    }

    package func destination(_ relationship: RelationshipDescription, of object: Row) -> Row? { nil }

    package func destinations(_ relationship: RelationshipDescription, of object: Row) -> [Row] { [] }

    package func objectID(of object: Row) -> ObjectID { object.id }
}
