import Foundation

/// A value of a property, typed the way the model types it.
///
/// Integers of every width are `.integer`; `Float` and `Double` are
/// `.double`; `Decimal` stays exact as Foundation's `Decimal`; a URI keeps
/// its text; `Transformable` values are the `Data` their transformer made.
/// Relationships hold object IDs.
public enum PropertyValue: Sendable, Hashable, CustomStringConvertible {
    /// No value (`nil` in Core Data).
    case null
    /// `Integer 16`, `Integer 32` and `Integer 64`.
    case integer(Int64)
    /// `Double` and `Float`.
    case double(Double)
    /// `Decimal`, exact.
    case decimal(Decimal)
    /// `String`.
    case string(String)
    /// `Boolean`.
    case boolean(Bool)
    /// `Date`.
    case date(Date)
    /// `Binary` and `Transformable`.
    case binary(Data)
    /// `UUID`.
    case uuid(UUID)
    /// `URI`, as its text.
    case uri(String)
    /// A to-one relationship's destination. Boxed (`indirect`): an
    /// ``ObjectID`` is 49 bytes, and unboxed it would make every value of
    /// every type 56 bytes instead of 24, in every dictionary and array of
    /// values (per-object changes, snapshots, rows).
    indirect case object(ObjectID)
    /// A to-many relationship's destinations (in order for ordered ones).
    case objects([ObjectID])

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short, type-revealing rendering for messages and logs.
    public var description: String {
        switch self {
        case .null: "nil"
        case .integer(let v): String(v)
        case .double(let v): String(v)
        case .decimal(let v): v.description
        case .string(let v): "\"\(v)\""
        case .boolean(let v): v ? "true" : "false"
        case .date(let v): v.formatted(.iso8601)
        case .binary(let v): "<\(v.count) bytes>"
        case .uuid(let v): v.uuidString
        case .uri(let v): v
        case .object(let id): id.uriRepresentation
        case .objects(let ids): "[" + ids.map(\.uriRepresentation).joined(separator: ", ") + "]"
        }
    }
}
