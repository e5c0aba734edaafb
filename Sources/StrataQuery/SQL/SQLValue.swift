import Foundation

/// A value as a SQL store writes and binds it: the compiler's arguments and
/// the stored form of attribute values (see ``SQLValueCoding``), with no tie
/// to one database or driver. Each store converts it to its driver's type
/// when it binds it; decimals, UUIDs and text are kept as what they are,
/// because databases store them differently (SQLite: a ``DecimalKey`` TEXT,
/// a 16-byte BLOB, text holding U+0000 as a BLOB; PostgreSQL: `numeric`,
/// `uuid`, `text`).
public enum SQLValue: Sendable, Hashable {
    /// NULL.
    case null
    /// A 64-bit integer.
    case integer(Int64)
    /// A double-precision floating-point number (never NaN: NaN is NULL).
    case real(Double)
    /// An exact decimal number (never NaN: NaN is NULL).
    case decimal(Decimal)
    /// Text (possibly holding U+0000).
    case text(String)
    /// Bytes.
    case blob(Data)
    /// A UUID.
    case uuid(UUID)
}
