import Foundation
import StrataModel

/// Converts attribute values to their stored SQL form (see ``SQLiteSchema``
/// for the column types): what a SQL store writes and what the compiler
/// binds. Reading them back is the store's (its driver reads the columns).
public enum SQLValueCoding {
    /// The stored form of a value: integers and Booleans as INTEGER, Doubles
    /// and dates (seconds since 2001) as REAL, Decimals as ``DecimalKey``
    /// TEXT, strings and URIs as TEXT, Data as BLOB, UUIDs as 16-byte BLOBs,
    /// a saved object as its primary key. NaN and unsaved objects are NULL.
    public static func sqlValue(for value: PropertyValue) -> SQLValue {
        switch value {
        case .null: return .null
        case .integer(let v): return .integer(v)
        case .boolean(let b): return .integer(b ? 1 : 0)
        case .double(let d): return d.isNaN ? .null : .real(d)
        case .decimal(let d): return DecimalKey.encode(d).map(SQLValue.text) ?? .null
        case .string(let s), .uri(let s): return text(s)
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            return seconds.isNaN ? .null : .real(seconds)
        case .binary(let data): return .blob(data)
        case .uuid(let uuid): return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case .object(let id): return id.primaryKey.map(SQLValue.integer) ?? .null
        case .objects: return .null
        }
    }

    /// The stored form of a value converted into a comparison domain.
    public static func sqlValue(for value: DomainValue) -> SQLValue {
        switch value {
        case .null: return .null
        case .integer(let v): return .integer(v)
        case .double(let d): return d.isNaN ? .null : .real(d)
        case .decimal(let d): return DecimalKey.encode(d).map(SQLValue.text) ?? .null
        case .string(let s): return text(s)
        case .bytes(let data): return .blob(data)
        case .uuid(let uuid): return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case .object(let id): return id.primaryKey.map(SQLValue.integer) ?? .null
        }
    }

    /// Text as it is, or, when it contains U+0000 (which SQLite's text
    /// binding through GRDB and reading would cut), its UTF-8 bytes as a
    /// BLOB. The store writes such values this way and the compiler binds
    /// constants this way, so that `==`, `IN` and the string functions see
    /// every character; the SQLite store reads both forms back as text.
    public static func text(_ s: String) -> SQLValue {
        needsBlob(s) ? .blob(Data(s.utf8)) : .text(s)
    }

    /// Whether `s` must be stored and bound as a BLOB (it holds U+0000).
    public static func needsBlob(_ s: String) -> Bool {
        s.utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        } ?? s.utf8.contains(0)
    }
}
