import GRDB
import StrataModel
import StrataQuery

/// Turns the value of an attribute into what its SQLite column stores:
/// ``SQLAttributeEncoder``'s checked value in ``SQLiteValueCoding``'s form.
enum SQLiteAttributeEncoder {
    /// The stored form of `value` for `attribute` of an object of `entity`
    /// (named in errors as `Entity.attribute`).
    @inline(__always)
    static func encode(_ value: PropertyValue, type: AttributeType, entity: String, attribute: String) throws(StrataError) -> DatabaseValue {
        if case .null = value { return .null }
        return try SQLAttributeEncoder.encode(value, type: type, entity: entity, attribute: attribute).databaseValue
    }

    /// ``encode(_:type:entity:attribute:)`` as the SQL layer's value, for
    /// an insert row (``SQLiteRunnerValue`` binds it in its stored form).
    @inline(__always)
    static func cell(_ value: PropertyValue, type: AttributeType, entity: String, attribute: String) throws(StrataError) -> SQLValue {
        if case .null = value { return .null }
        return try SQLAttributeEncoder.encode(value, type: type, entity: entity, attribute: attribute)
    }
}
