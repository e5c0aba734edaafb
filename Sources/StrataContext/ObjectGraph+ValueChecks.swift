import Foundation
import StrataModel

extension ObjectGraph {
    /// Checks (and normalises) a value for an attribute's type.
    static func checked(_ value: PropertyValue, for attribute: AttributeDescription, entity: String) throws -> PropertyValue {
        try checked(value, type: attribute.type, name: attribute.name, entity: entity)
    }

    /// ``checked(_:for:entity:)`` given the attribute's type and name.
    static func checked(_ value: PropertyValue, type: AttributeType, name: String, entity: String) throws -> PropertyValue {
        func wrong() -> StrataError {
            StrataError(.invalidValue, "'\(entity).\(name)' is \(type.xcodeName); \(value) does not fit")
        }
        if case .null = value { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            let range = type.integerRange ?? (Int64.min...Int64.max)
            guard case .integer(let v) = value else { throw wrong() }
            guard range.contains(v) else {
                throw StrataError(.invalidValue, "'\(entity).\(name)': \(v) does not fit \(type.xcodeName)")
            }
            return value
        case .decimal:
            switch value {
            case .decimal: return value
            case .integer(let v): return .decimal(Decimal(v))
            default: throw wrong()
            }
        case .double:
            switch value {
            case .double: return value
            case .integer(let v): return .double(Double(v))
            default: throw wrong()
            }
        case .float:
            switch value {
            case .double(let v): return .double(Double(Float(v)))
            case .integer(let v): return .double(Double(Float(v)))
            default: throw wrong()
            }
        case .string:
            guard case .string = value else { throw wrong() }
            return value
        case .boolean:
            guard case .boolean = value else { throw wrong() }
            return value
        case .date:
            guard case .date = value else { throw wrong() }
            return value
        case .binary, .transformable:
            guard case .binary = value else { throw wrong() }
            return value
        case .uuid:
            guard case .uuid = value else { throw wrong() }
            return value
        case .uri:
            switch value {
            case .uri: return value
            case .string(let s): return .uri(s)
            default: throw wrong()
            }
        case .undefined, .objectID, .composite:
            return value
        }
    }
}
