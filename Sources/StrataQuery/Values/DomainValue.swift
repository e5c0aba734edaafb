import Foundation
import StrataModel

/// A value converted into a ``ComparisonDomain``: what both the evaluator
/// and the SQL compiler compare. The conversions are the IR's (see
/// ``ComparisonDomain``): integers become Doubles in the `.double` domain,
/// integers and Doubles (through their shortest text) become Decimals in
/// the `.decimal` domain, Booleans are 0 and 1, dates are seconds since
/// 2001-01-01. A NaN (Double or Decimal) has no place in any order and
/// becomes ``null``, as SQLite stores it.
public enum DomainValue: Sendable, Hashable {
    /// No value.
    case null
    /// `.integer` domain.
    case integer(Int64)
    /// `.double` and `.date` domains (dates as seconds since 2001).
    case double(Double)
    /// `.decimal` domain.
    case decimal(Decimal)
    /// `.string` and `.uri` domains.
    case string(String)
    /// `.binary` domain.
    case bytes(Data)
    /// `.uuid` domain.
    case uuid(UUID)
    /// `.object` domain.
    case object(ObjectID)

    /// Converts `value` into `domain`, or throws ``StrataError/Code/predicateType``
    /// when the value's kind cannot be compared in that domain.
    public static func convert(_ value: PropertyValue, to domain: ComparisonDomain) throws(StrataError) -> DomainValue {
        if case .null = value { return .null }
        let converted: DomainValue?
        switch domain {
        case .integer: converted = integer(value).map(DomainValue.integer)
        case .double:
            switch value {
            case .integer, .boolean, .double: converted = double(value).map(DomainValue.double) ?? .null
            default: converted = nil
            }
        case .decimal: converted = isNumeric(value) ? decimal(value).map(DomainValue.decimal) ?? .null : nil
        case .string, .uri: converted = text(value).map(DomainValue.string)
        case .date: converted = isDateLike(value) ? date(value).map(DomainValue.double) ?? .null : nil
        case .binary:
            if case .binary(let data) = value { converted = .bytes(data) } else { converted = nil }
        case .uuid:
            if case .uuid(let uuid) = value { converted = .uuid(uuid) } else { converted = nil }
        case .object:
            if case .object(let id) = value { converted = .object(id) } else { converted = nil }
        }
        guard let converted else {
            throw StrataError(.predicateType, "value \(value) cannot be compared as \(domain)")
        }
        return converted
    }

    // MARK: - Per-domain extraction (nil for nil, NaN, or a kind the domain rejects)

    /// The Int64 of an integer or Boolean (and of a Double holding an exact integer).
    @inlinable
    public static func integer(_ value: PropertyValue) -> Int64? {
        switch value {
        case .integer(let v): return v
        case .boolean(let b): return b ? 1 : 0
        case .double(let d):
            guard d.isFinite, d.rounded(.towardZero) == d, let exact = Int64(exactly: d) else { return nil }
            return exact
        default: return nil
        }
    }

    /// The Double of an integer, Boolean or Double; nil for NaN.
    @inlinable
    public static func double(_ value: PropertyValue) -> Double? {
        switch value {
        case .integer(let v): return Double(v)
        case .boolean(let b): return b ? 1 : 0
        case .double(let d): return d.isNaN ? nil : d
        default: return nil
        }
    }

    /// The Decimal of any number (Doubles through their shortest text); nil for NaN.
    @inlinable
    public static func decimal(_ value: PropertyValue) -> Decimal? {
        switch value {
        case .integer(let v): return DecimalConversion.decimal(from: v)
        case .boolean(let b): return b ? 1 : 0
        case .double(let d): return DecimalConversion.decimal(from: d)
        case .decimal(let d): return d.isNaN ? nil : d
        default: return nil
        }
    }

    /// The text of a string or URI.
    @inlinable
    public static func text(_ value: PropertyValue) -> String? {
        switch value {
        case .string(let s), .uri(let s): return s
        default: return nil
        }
    }

    /// Seconds since 2001 of a date (numbers are taken as such seconds); nil for NaN.
    @inlinable
    public static func date(_ value: PropertyValue) -> Double? {
        switch value {
        case .date(let d):
            let seconds = d.timeIntervalSinceReferenceDate
            return seconds.isNaN ? nil : seconds
        case .integer(let v): return Double(v)
        case .double(let d): return d.isNaN ? nil : d
        default: return nil
        }
    }

    @usableFromInline
    static func isNumeric(_ value: PropertyValue) -> Bool {
        switch value {
        case .integer, .boolean, .double, .decimal: true
        default: false
        }
    }

    @usableFromInline
    static func isDateLike(_ value: PropertyValue) -> Bool {
        switch value {
        case .date, .integer, .double: true
        default: false
        }
    }
}

extension ComparisonDomain {
    /// Whether attributes of `type` can be compared in this domain (their
    /// values convert without loss of meaning).
    public func accepts(_ type: AttributeType) -> Bool {
        switch self {
        case .integer: type.isInteger || type == .boolean
        case .double: type.isInteger || type == .boolean || type == .double || type == .float
        case .decimal: type.isNumeric
        case .string, .uri: type == .string || type == .uri
        case .date: type == .date
        case .binary: type == .binary || type == .transformable
        case .uuid: type == .uuid
        case .object: false
        }
    }
}
