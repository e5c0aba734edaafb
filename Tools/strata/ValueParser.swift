import Foundation
import StrataModel
import StrataText
import StrataWire

/// Turns `key=value` text into typed wire values, as the model types the
/// key: every check happens here, before anything is sent, and a value
/// that does not fit names the property and the expected type.
///
/// `key=` and `key=null` set nil. Integers are checked against their
/// width, decimals are exact, booleans are `true/false/yes/no` (and
/// `1/0`), dates ISO-8601, UUIDs and URIs as text, binary and
/// transformable values base64, to-one relationships an object ID and
/// to-many ones comma-separated object IDs.
struct ValueParser {
    /// The served model.
    let model: ServedModel
    /// Temporary IDs of objects inserted in the open change set, by entity,
    /// which relationships may name too.
    var pendingInserts: [String: String] = [:]

    /// The values of `assignments` (`key=value` each) for an object of `entity`.
    func values(_ assignments: [String], entity: Strata_V1_EntityInfo) throws(CLIError) -> [String: Strata_V1_Value] {
        var values: [String: Strata_V1_Value] = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "=") else {
                throw .usage("expected key=value, got '\(assignment)'")
            }
            let key = String(assignment[..<equals])
            let text = String(assignment[assignment.index(after: equals)...])
            guard !key.isEmpty else { throw .usage("expected key=value, got '\(assignment)'") }
            guard values[key] == nil else { throw .usage("\(entity.name).\(key) is given twice") }
            values[key] = try value(text, key: key, entity: entity)
        }
        return values
    }

    /// One value for `entity.key`.
    func value(_ text: String, key: String, entity: Strata_V1_EntityInfo) throws(CLIError) -> Strata_V1_Value {
        if let attribute = entity.attributes.first(where: { $0.name == key }) {
            if !attribute.derivation.isEmpty {
                throw .invalid("\(entity.name).\(key) is derived (\(attribute.derivation)); the server computes it")
            }
            if attribute.transient {
                throw .invalid("\(entity.name).\(key) is transient; it is never stored")
            }
            if text.isEmpty || text == "null" { return Strata_V1_Value() }
            return try Self.attributeValue(text, type: attribute.type, field: "\(entity.name).\(key)").wire
        }
        if let relationship = entity.relationships.first(where: { $0.name == key }) {
            if relationship.transient {
                throw .invalid("\(entity.name).\(key) is transient; it is never stored")
            }
            return try relationshipValue(text, relationship: relationship, field: "\(entity.name).\(key)")
        }
        let known = (entity.attributes.filter { !$0.transient && $0.derivation.isEmpty }.map(\.name)
            + entity.relationships.filter { !$0.transient }.map(\.name)).joined(separator: ", ")
        throw .invalid("\(entity.name) has no attribute or relationship '\(key)' (settable: \(known))")
    }

    /// An attribute value of Core Data type `type` (`Integer 32`, `Date`, …).
    static func attributeValue(_ text: String, type: String, field: String) throws(CLIError) -> PropertyValue {
        do {
            return try ValueText.attributeValue(text, type: type, field: field)
        } catch {
            throw .invalid(error.message)
        }
    }

    /// A to-one (object ID) or to-many (comma-separated IDs) value.
    private func relationshipValue(_ text: String, relationship: Strata_V1_RelationshipInfo, field: String) throws(CLIError) -> Strata_V1_Value {
        if text == "null" || (text.isEmpty && !relationship.toMany) { return Strata_V1_Value() }
        let expected = relationship.toMany
            ? "comma-separated object IDs of \(relationship.destination)"
            : "an object ID of \(relationship.destination)"
        var ids: [String] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: true) {
            let id = part.trimmingCharacters(in: .whitespaces)
            let entityName: String
            if let pending = pendingInserts[id] {
                entityName = pending
            } else if let objectID = ObjectID(uriRepresentation: id), id.hasPrefix("strata://") {
                entityName = objectID.entityName
            } else {
                throw .invalid("\(field): expected \(relationship.toMany ? "to-many" : "to-one") relationship (\(expected)), got '\(id)'")
            }
            guard model.isKind(entityName, of: relationship.destination) else {
                throw .invalid("\(field): expected \(expected), got an object of \(entityName): '\(id)'")
            }
            ids.append(id)
        }
        var value = Strata_V1_Value()
        if relationship.toMany {
            value.objects = Strata_V1_ObjectIDList.with { $0.ids = ids }
        } else {
            guard ids.count == 1, let id = ids.first else {
                throw .invalid("\(field): expected to-one relationship (\(expected)), got '\(text)'")
            }
            value.object = id
        }
        return value
    }
}
