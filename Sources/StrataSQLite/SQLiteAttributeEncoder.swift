import Foundation
import GRDB
import StrataModel
import StrataStore
import StrataQuery

/// Turns the value of an attribute into what its column stores, checking
/// that it fits the attribute's type first (the stored forms are
/// ``SQLiteValueCoding``'s).
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
/// NaN is refused: SQLite would turn it into NULL.
enum SQLiteAttributeEncoder {
    /// The stored form of `value` for `attribute` of an object of `entity`
    /// (named in errors as `Entity.attribute`).
    static func encode(_ value: PropertyValue, type: AttributeType, entity: String, attribute: String) throws(StrataError) -> DatabaseValue {
        // One switch on the type, then one on the value: a switch over the
        // (type, value) pair tests its patterns one after the other.
        if case .null = value { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            switch value {
            case .integer(let v):
                return try checkedInteger(v, type: type, entity: entity, attribute: attribute)
            case .boolean(let b):
                return (b ? 1 : 0 as Int64).databaseValue
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
                throw StrataError(.invalidValue, "\(entity).\(attribute): NaN cannot be stored (SQLite turns it into NULL)")
            }
            return (type == .float ? Double(Float(d)) : d).databaseValue
        case .decimal:
            switch value {
            case .decimal(let d):
                return try decimalKey(d, value: value, entity: entity, attribute: attribute)
            case .integer(let v):
                return try decimalKey(DecimalConversion.decimal(from: v), value: value, entity: entity, attribute: attribute)
            case .double(let d):
                guard let decimal = DecimalConversion.decimal(from: d) else {
                    throw StrataError(.invalidValue, "\(entity).\(attribute): \(value) is not a finite number and cannot be stored as a Decimal")
                }
                return try decimalKey(decimal, value: value, entity: entity, attribute: attribute)
            default:
                break
            }
        case .boolean:
            switch value {
            case .boolean(let b): return (b ? 1 : 0 as Int64).databaseValue
            case .integer(let v): return (v != 0 ? 1 : 0 as Int64).databaseValue
            default: break
            }
        case .string, .uri:
            switch value {
            case .string(let s), .uri(let s): return text(s)
            default: break
            }
        case .objectID:
            switch value {
            case .string(let s), .uri(let s): return text(s)
            case .object(let id): return text(id.uriRepresentation)
            default: break
            }
        case .date:
            if case .date(let date) = value {
                let seconds = date.timeIntervalSinceReferenceDate
                guard !seconds.isNaN else {
                    throw StrataError(.invalidValue, "\(entity).\(attribute): the date is NaN and cannot be stored")
                }
                return seconds.databaseValue
            }
        case .binary, .transformable, .undefined, .composite:
            if case .binary(let data) = value { return data.databaseValue }
        case .uuid:
            if case .uuid = value { return SQLiteValueCoding.databaseValue(for: value) }
        }
        throw mismatch(value, type: type, entity: entity, attribute: attribute)
    }

    private static func mismatch(_ value: PropertyValue, type: AttributeType, entity: String, attribute: String) -> StrataError {
        StrataError(.invalidValue, "\(entity).\(attribute): \(value) is not a value of type \(type.xcodeName)")
    }

    /// Text as the store writes it (see ``SQLiteValueCoding/text(_:)``):
    /// a BLOB of its UTF-8 bytes when it holds U+0000. Such values round-
    /// trip exactly and match the compiler's constants.
    static func text(_ s: String) -> DatabaseValue {
        SQLiteValueCoding.text(s)
    }

    private static func checkedInteger(_ v: Int64, type: AttributeType, entity: String, attribute: String) throws(StrataError) -> DatabaseValue {
        if let range = type.integerRange, !range.contains(v) {
            throw StrataError(.invalidValue, "\(entity).\(attribute): \(v) does not fit \(type.xcodeName)")
        }
        return v.databaseValue
    }

    private static func decimalKey(_ d: Decimal, value: PropertyValue, entity: String, attribute: String) throws(StrataError) -> DatabaseValue {
        guard !d.isNaN, let key = DecimalKey.encode(d) else {
            throw StrataError(.invalidValue, "\(entity).\(attribute): \(value) cannot be stored as a Decimal")
        }
        return key.databaseValue
    }
}
