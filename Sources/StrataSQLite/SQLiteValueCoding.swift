import Foundation
import GRDB
import StrataModel
import StrataStore
import StrataQuery

/// Converts attribute values to and from their stored SQLite form, as
/// GRDB binds and reads them: ``SQLValueCoding``'s form, and back.
public enum SQLiteValueCoding {
    /// The stored form of a value (``SQLValueCoding/sqlValue(for:)-(PropertyValue)``).
    public static func databaseValue(for value: PropertyValue) -> DatabaseValue {
        SQLValueCoding.sqlValue(for: value).databaseValue
    }

    /// The stored form of a value converted into a comparison domain.
    public static func databaseValue(for value: DomainValue) -> DatabaseValue {
        SQLValueCoding.sqlValue(for: value).databaseValue
    }

    /// Text as GRDB binds it, or, when it contains U+0000 (which GRDB's
    /// text binding and reading would cut), its UTF-8 bytes as a BLOB. The
    /// store writes such values this way and the compiler's constants are
    /// bound this way, so that `==`, `IN` and the string functions see every
    /// character; ``string(_:)`` reads both forms.
    public static func text(_ s: String) -> DatabaseValue {
        SQLValueCoding.containsNUL(s) ? Data(s.utf8).databaseValue : s.databaseValue
    }

    /// The whole text of a stored or bound string: TEXT as it is, a BLOB
    /// (text that held U+0000) decoded as UTF-8; nil for anything else.
    public static func string(_ value: DatabaseValue) -> String? {
        switch value.storage {
        case .string(let s): return s
        case .blob(let bytes): return String(decoding: bytes, as: UTF8.self)
        default: return nil
        }
    }

    /// The value of an attribute of `type` read from its column. Throws
    /// ``StrataError/Code/invalidValue`` when the stored value does not fit
    /// the type (a malformed decimal key, a UUID blob of the wrong size…).
    public static func propertyValue(from dbValue: DatabaseValue, type: AttributeType) throws(StrataError) -> PropertyValue {
        let storage = dbValue.storage
        if case .null = storage { return .null }
        switch (type, storage) {
        case (.integer16, .int64(let v)), (.integer32, .int64(let v)), (.integer64, .int64(let v)):
            return .integer(v)
        case (.boolean, .int64(let v)):
            return .boolean(v != 0)
        case (.double, .double(let d)), (.float, .double(let d)):
            return .double(d)
        case (.double, .int64(let v)), (.float, .int64(let v)):
            return .double(Double(v))
        case (.date, .double(let d)):
            return .date(Date(timeIntervalSinceReferenceDate: d))
        case (.date, .int64(let v)):
            return .date(Date(timeIntervalSinceReferenceDate: Double(v)))
        case (.decimal, .string(let key)):
            guard let decimal = DecimalKey.decode(key) else {
                throw StrataError(.invalidValue, "stored decimal key '\(key)' is malformed")
            }
            return .decimal(decimal)
        case (.string, .string(let s)):
            return .string(s)
        case (.uri, .string(let s)):
            return .uri(s)
        case (.string, .blob(let bytes)):
            return .string(String(decoding: bytes, as: UTF8.self))
        case (.uri, .blob(let bytes)):
            return .uri(String(decoding: bytes, as: UTF8.self))
        case (.binary, .blob(let data)), (.transformable, .blob(let data)), (.undefined, .blob(let data)), (.composite, .blob(let data)):
            return .binary(data)
        case (.uuid, .blob(let data)):
            guard data.count == 16 else {
                throw StrataError(.invalidValue, "stored UUID has \(data.count) bytes instead of 16")
            }
            // Read in place: no intermediate byte array per row.
            return .uuid(UUID(uuid: data.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }))
        case (.objectID, .string(let s)):
            return .uri(s)
        default:
            throw StrataError(.invalidValue, "stored value \(dbValue) does not fit an attribute of type \(type.rawValue)")
        }
    }
}

extension SQLValue {
    /// The value as the SQLite store stores and binds it: decimals as their
    /// ``DecimalKey`` TEXT, UUIDs as 16-byte BLOBs, text holding U+0000 as
    /// its UTF-8 bytes (``SQLiteValueCoding/text(_:)``).
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .integer(let v): return v.databaseValue
        case .real(let d): return d.databaseValue
        case .decimal(let d): return DecimalKey.encode(d)?.databaseValue ?? .null
        case .text(let s): return SQLiteValueCoding.text(s)
        case .blob(let data): return data.databaseValue
        case .uuid(let uuid): return withUnsafeBytes(of: uuid.uuid) { Data($0) }.databaseValue
        }
    }
}

extension CompiledQuery {
    /// The arguments as GRDB statement arguments.
    public var statementArguments: StatementArguments {
        StatementArguments(arguments.map(\.databaseValue))
    }
}
