import Foundation
import StrataModel
import StrataQuery

/// Checks and normalises attribute values the way every Strata store
/// stores them, so that all stores read back the same value. The accepted
/// values are those of the SQLite store (`SQLiteAttributeEncoder`), rule
/// for rule:
/// - Integer 16/32/64: `.integer` within the type's range (`Integer 16`
///   holds −32768…32767), `.boolean` (0/1), an integral `.double` in range;
/// - Double: `.double`, `.integer`, `.decimal`; Float the same, rounded
///   through `Float`;
/// - Decimal: `.decimal`, `.integer`, a finite `.double` (through its
///   shortest decimal text), normalised through ``DecimalKey`` (so `1.50`
///   and `1.5` are the same stored value);
/// - Boolean: `.boolean`, `.integer` (non-zero is true);
/// - String and URI: `.string` or `.uri`, kept as the attribute's kind;
/// - Date, UUID: their own kind; Binary, Transformable, Undefined,
///   Composite: `.binary`; ObjectID: `.uri`, `.string`, `.object` (its URI).
///
/// `.null` is always accepted (mandatory checks belong to the context).
/// NaN is refused (SQLite would turn it into NULL). Anything else fails
/// with ``StrataError/Code/invalidValue`` naming `Entity.attribute`.
enum AttributeValueCoercion {
    /// The stored form of `value` for `attribute` of `entity`.
    static func coerce(_ value: PropertyValue, to attribute: AttributeDescription, entity: String) throws(StrataError) -> PropertyValue {
        let type = attribute.type
        let name = "\(entity).\(attribute.name)"
        switch (type, value) {
        case (_, .null):
            return .null
        case (.integer16, .integer(let v)), (.integer32, .integer(let v)), (.integer64, .integer(let v)):
            return .integer(try checkedInteger(v, type: type, name: name))
        case (.integer16, .boolean(let b)), (.integer32, .boolean(let b)), (.integer64, .boolean(let b)):
            return .integer(b ? 1 : 0)
        case (.integer16, .double(let d)), (.integer32, .double(let d)), (.integer64, .double(let d)):
            guard d.rounded(.towardZero) == d, let v = Int64(exactly: d) else {
                throw StrataError(.invalidValue, "\(name): \(value) does not fit \(type.xcodeName)")
            }
            return .integer(try checkedInteger(v, type: type, name: name))
        case (.double, .double(let d)):
            return .double(try notNaN(d, name: name))
        case (.float, .double(let d)):
            return .double(try notNaN(Double(Float(d)), name: name))
        case (.double, .integer(let v)):
            return .double(Double(v))
        case (.float, .integer(let v)):
            return .double(Double(Float(v)))
        case (.double, .decimal(let d)):
            return .double(try notNaN(NSDecimalNumber(decimal: d).doubleValue, name: name))
        case (.float, .decimal(let d)):
            return .double(try notNaN(Double(Float(NSDecimalNumber(decimal: d).doubleValue)), name: name))
        case (.decimal, .decimal(let d)):
            return try decimal(d, value: value, name: name)
        case (.decimal, .integer(let v)):
            return try decimal(DecimalConversion.decimal(from: v), value: value, name: name)
        case (.decimal, .double(let d)):
            guard let converted = DecimalConversion.decimal(from: d) else {
                throw StrataError(.invalidValue, "\(name): \(value) is not a finite number and cannot be stored as a Decimal")
            }
            return try decimal(converted, value: value, name: name)
        case (.boolean, .boolean):
            return value
        case (.boolean, .integer(let v)):
            return .boolean(v != 0)
        case (.string, .string(let s)), (.string, .uri(let s)):
            return .string(s)
        case (.uri, .uri(let s)), (.uri, .string(let s)):
            return .uri(s)
        case (.objectID, .uri(let s)), (.objectID, .string(let s)):
            return .uri(s)
        case (.objectID, .object(let id)):
            return .uri(id.uriRepresentation)
        case (.date, .date(let date)):
            guard !date.timeIntervalSinceReferenceDate.isNaN else {
                throw StrataError(.invalidValue, "\(name): the date is NaN and cannot be stored")
            }
            return value
        case (.binary, .binary), (.transformable, .binary), (.undefined, .binary), (.composite, .binary):
            return value
        case (.uuid, .uuid):
            return value
        default:
            throw StrataError(.invalidValue, "\(name): \(kind(of: value)) \(value) is not a value of type \(type.xcodeName)")
        }
    }

    private static func checkedInteger(_ v: Int64, type: AttributeType, name: String) throws(StrataError) -> Int64 {
        if let range = type.integerRange, !range.contains(v) {
            throw StrataError(.invalidValue, "\(name): \(v) does not fit \(type.xcodeName)")
        }
        return v
    }

    private static func notNaN(_ d: Double, name: String) throws(StrataError) -> Double {
        guard !d.isNaN else {
            throw StrataError(.invalidValue, "\(name): NaN cannot be stored")
        }
        return d
    }

    private static func decimal(_ d: Decimal, value: PropertyValue, name: String) throws(StrataError) -> PropertyValue {
        guard !d.isNaN, let key = DecimalKey.encode(d), let back = DecimalKey.decode(key) else {
            throw StrataError(.invalidValue, "\(name): \(value) cannot be stored as a Decimal")
        }
        return .decimal(back)
    }

    /// Whether a stored value has the kind an attribute of `type` stores.
    static func isStoredForm(_ value: PropertyValue, of type: AttributeType) -> Bool {
        switch (type, value) {
        case (_, .null): true
        case (.integer16, .integer(let v)), (.integer32, .integer(let v)), (.integer64, .integer(let v)):
            type.integerRange?.contains(v) ?? false
        case (.boolean, .boolean), (.double, .double), (.float, .double), (.decimal, .decimal), (.string, .string),
             (.uri, .uri), (.date, .date), (.binary, .binary), (.transformable, .binary), (.undefined, .binary),
             (.composite, .binary), (.uuid, .uuid), (.objectID, .uri):
            true
        default:
            false
        }
    }

    /// The value's kind, for messages.
    static func kind(of value: PropertyValue) -> String {
        switch value {
        case .null: "nil"
        case .integer: "integer"
        case .double: "double"
        case .decimal: "decimal"
        case .string: "string"
        case .boolean: "boolean"
        case .date: "date"
        case .binary: "data"
        case .uuid: "UUID"
        case .uri: "URI"
        case .object: "object"
        case .objects: "object list"
        }
    }
}
