import Foundation
import StrataModel

/// Turns the value of an attribute into the ``SQLValue`` its column
/// stores, checking that it fits the attribute's type first (the forms are
/// ``SQLValueCoding``'s; each SQL store converts them for its driver).
///
/// Accepted values per type:
/// - Integer 16/32/64: `.integer` within the type's range, `.boolean`
///   (0/1), an integral `.double` within range;
/// - Double: `.double`, `.integer`, `.decimal`; Float the same, rounded to
///   `Float` precision before storing;
/// - Decimal: `.decimal`, `.integer`, finite `.double` (converted through its
///   shortest decimal text);
/// - Boolean: `.boolean`, `.integer` (non-zero is true);
/// - String: `.string`, `.uri`; URI: `.uri`, `.string`;
/// - Date: `.date`; UUID: `.uuid`; Binary, Transformable, Undefined,
///   Composite: `.binary`;
/// - ObjectID: `.uri`, `.string`, `.object` (its URI).
///
/// `.null` is always accepted (mandatory checks belong to the context).
/// NaN is refused: SQL stores would turn it into NULL.
package enum SQLAttributeEncoder {
    /// The stored form of `value` for `attribute` of an object of `entity`
    /// (named in errors as `Entity.attribute`).
    package static func encode(_ value: PropertyValue, type: AttributeType, entity: String, attribute: String) throws(StrataError) -> SQLValue {
        // One switch on the type, then one on the value: a switch over the
        // (type, value) pair tests its patterns one after the other.
        if case .null = value { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            switch value {
            case .integer(let v):
                return try checkedInteger(v, type: type, entity: entity, attribute: attribute)
            case .boolean(let b):
                return .integer(b ? 1 : 0)
            case .double(let d):
                guard d.rounded(.towardZero) == d, let v = Int64(exactly: d) else {
                    throw StrataError(.invalidValue, "\(entity).\(attribute): \(value) does not fit \(type.xcodeName)")
                }
                return try checkedInteger(v, type: type, entity: entity, attribute: attribute)
            default:
                break
            }
        case .double, .float:
            let d: Double
            switch value {
            case .double(let v): d = v
            case .integer(let v): d = Double(v)
            case .decimal(let v): d = NSDecimalNumber(decimal: v).doubleValue
            default: throw mismatch(value, type: type, entity: entity, attribute: attribute)
            }
            guard !d.isNaN else {
                throw StrataError(.invalidValue, "\(entity).\(attribute): NaN cannot be stored (a SQL store would turn it into NULL)")
            }
            return .real(type == .float ? Double(Float(d)) : d)
        case .decimal:
            switch value {
            case .decimal(let d):
                return try checkedDecimal(d, value: value, entity: entity, attribute: attribute)
            case .integer(let v):
                return try checkedDecimal(DecimalConversion.decimal(from: v), value: value, entity: entity, attribute: attribute)
            case .double(let d):
                guard let decimal = DecimalConversion.decimal(from: d) else {
                    throw StrataError(.invalidValue, "\(entity).\(attribute): \(value) is not a finite number and cannot be stored as a Decimal")
                }
                return try checkedDecimal(decimal, value: value, entity: entity, attribute: attribute)
            default:
                break
            }
        case .boolean:
            switch value {
            case .boolean(let b): return .integer(b ? 1 : 0)
            case .integer(let v): return .integer(v != 0 ? 1 : 0)
            default: break
            }
        case .string, .uri:
            switch value {
            case .string(let s), .uri(let s): return .text(s)
            default: break
            }
        case .objectID:
            switch value {
            case .string(let s), .uri(let s): return .text(s)
            case .object(let id): return .text(id.uriRepresentation)
            default: break
            }
        case .date:
            if case .date(let date) = value {
                let seconds = date.timeIntervalSinceReferenceDate
                guard !seconds.isNaN else {
                    throw StrataError(.invalidValue, "\(entity).\(attribute): the date is NaN and cannot be stored")
                }
                return .real(seconds)
            }
        case .binary, .transformable, .undefined, .composite:
            if case .binary(let data) = value { return .blob(data) }
        case .uuid:
            if case .uuid(let uuid) = value { return .uuid(uuid) }
        }
        throw mismatch(value, type: type, entity: entity, attribute: attribute)
    }

    private static func mismatch(_ value: PropertyValue, type: AttributeType, entity: String, attribute: String) -> StrataError {
        StrataError(.invalidValue, "\(entity).\(attribute): \(value) is not a value of type \(type.xcodeName)")
    }

    private static func checkedInteger(_ v: Int64, type: AttributeType, entity: String, attribute: String) throws(StrataError) -> SQLValue {
        if let range = type.integerRange, !range.contains(v) {
            throw StrataError(.invalidValue, "\(entity).\(attribute): \(v) does not fit \(type.xcodeName)")
        }
        return .integer(v)
    }

    private static func checkedDecimal(_ d: Decimal, value: PropertyValue, entity: String, attribute: String) throws(StrataError) -> SQLValue {
        guard !d.isNaN else {
            throw StrataError(.invalidValue, "\(entity).\(attribute): \(value) cannot be stored as a Decimal")
        }
        return .decimal(d)
    }
}
