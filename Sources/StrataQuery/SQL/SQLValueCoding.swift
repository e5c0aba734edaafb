import Foundation
import StrataModel

/// Converts attribute values to their stored SQL form: what a SQL store
/// writes and what the compiler binds, before the store's driver converts
/// them (see ``SQLValue``). Reading them back is the store's.
public enum SQLValueCoding {
    /// The stored form of a value: integers and Booleans (0, 1) as integers,
    /// Doubles and dates (seconds since 2001) as reals, Decimals as
    /// decimals, strings and URIs as text, Data as bytes, UUIDs as UUIDs, a
    /// saved object as its primary key. NaN and unsaved objects are NULL.
    public static func sqlValue(for value: PropertyValue) -> SQLValue {
        switch value {
        case .null: return .null
        case .integer(let v): return .integer(v)
        case .boolean(let b): return .integer(b ? 1 : 0)
        case .double(let d): return d.isNaN ? .null : .real(d)
        case .decimal(let d): return d.isNaN ? .null : .decimal(d)
        case .string(let s), .uri(let s): return .text(s)
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            return seconds.isNaN ? .null : .real(seconds)
        case .binary(let data): return .blob(data)
        case .uuid(let uuid): return .uuid(uuid)
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
        case .decimal(let d): return d.isNaN ? .null : .decimal(d)
        case .string(let s): return .text(s)
        case .bytes(let data): return .blob(data)
        case .uuid(let uuid): return .uuid(uuid)
        case .object(let id): return id.primaryKey.map(SQLValue.integer) ?? .null
        }
    }

    /// Whether `s` holds U+0000, which SQLite stores and binds as a BLOB
    /// and PostgreSQL's `text` cannot hold.
    public static func containsNUL(_ s: String) -> Bool {
        s.utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        } ?? s.utf8.contains(0)
    }
}
