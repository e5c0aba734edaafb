import Foundation
import StrataModel
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
        func mismatch(_ expected: String) -> CLIError {
            .invalid("\(field): expected \(type) (\(expected)), got '\(text)'")
        }
        switch type {
        case "Integer 16", "Integer 32", "Integer 64":
            let range: ClosedRange<Int64> = switch type {
            case "Integer 16": Int64(Int16.min)...Int64(Int16.max)
            case "Integer 32": Int64(Int32.min)...Int64(Int32.max)
            default: Int64.min...Int64.max
            }
            guard let value = Int64(text), range.contains(value) else {
                throw mismatch("a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return .integer(value)
        case "Decimal":
            guard let value = PropertyValue.exactDecimal(text) else {
                throw mismatch("an exact decimal number such as 12.50, at most 38 significant digits")
            }
            return .decimal(value)
        case "Double":
            guard let value = Double(text), value.isFinite else { throw mismatch("a finite number") }
            return .double(value)
        case "Float":
            guard let value = Double(text), value.isFinite, abs(value) <= Double(Float.greatestFiniteMagnitude) else {
                throw mismatch("a finite number within Float's range")
            }
            return .double(value)
        case "String":
            return .string(text)
        case "Boolean":
            switch text.lowercased() {
            case "true", "yes", "1": return .boolean(true)
            case "false", "no", "0": return .boolean(false)
            default: throw mismatch("true, false, yes or no")
            }
        case "Date":
            guard let date = ISO8601.parse(text) else {
                throw mismatch("an ISO-8601 date such as 2024-05-01T12:30:00Z or 2024-05-01T12:30:00.250+02:00")
            }
            return .date(date)
        case "UUID":
            guard let uuid = UUID(uuidString: text) else { throw mismatch("a UUID such as 4F1D2C3B-…") }
            return .uuid(uuid)
        case "URI":
            guard !text.contains(" "), URL(string: text) != nil else { throw mismatch("a URI") }
            return .uri(text)
        case "Binary", "Transformable":
            guard let data = Data(base64Encoded: text) else { throw mismatch("base64-encoded bytes") }
            return .binary(data)
        default:
            throw .invalid("\(field): attributes of type \(type) cannot be set from the command line")
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
