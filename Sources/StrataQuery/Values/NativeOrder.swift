import Foundation
import StrataModel

/// The order of an attribute type's own values (for `@min`, `@max` and
/// sorts): the order SQLite gives their stored form (INTEGER, REAL,
/// DecimalKey TEXT, TEXT under `BINARY`, BLOB).
enum NativeOrder {
    /// A three-way comparison of two non-nil values of `type`.
    static func comparator(for type: AttributeType) throws(StrataError) -> @Sendable (PropertyValue, PropertyValue) -> Int {
        switch type {
        case .integer16, .integer32, .integer64, .boolean:
            return { a, b in ValueComparison.compare(DomainValue.integer(a) ?? 0, DomainValue.integer(b) ?? 0) }
        case .double, .float:
            return { a, b in ValueComparison.compare(DomainValue.double(a) ?? 0, DomainValue.double(b) ?? 0) }
        case .decimal:
            return { a, b in ValueComparison.compare(DomainValue.decimal(a) ?? 0, DomainValue.decimal(b) ?? 0) }
        case .string, .uri:
            return { a, b in ValueComparison.compare(DomainValue.text(a) ?? "", DomainValue.text(b) ?? "") }
        case .date:
            return { a, b in ValueComparison.compare(DomainValue.date(a) ?? 0, DomainValue.date(b) ?? 0) }
        case .binary, .transformable:
            return { a, b in ValueComparison.compare(data(a), data(b)) }
        case .uuid:
            return { a, b in
                guard case .uuid(let x) = a, case .uuid(let y) = b else { return 0 }
                return ValueComparison.compare(x, y)
            }
        case .undefined, .objectID, .composite:
            throw StrataError(.predicateType, "values of type \(type.rawValue) have no order")
        }
    }

    /// Whether a value takes part in an order: not nil and not NaN (which
    /// SQLite stores as NULL).
    static func isOrdered(_ value: PropertyValue) -> Bool {
        switch value {
        case .null: false
        case .double(let d): !d.isNaN
        case .decimal(let d): !d.isNaN
        case .date(let d): !d.timeIntervalSinceReferenceDate.isNaN
        default: true
        }
    }

    private static func data(_ value: PropertyValue) -> Data {
        if case .binary(let data) = value { return data }
        return Data()
    }
}
