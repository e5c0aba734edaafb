import Foundation

/// A value as a SQL database stores and binds it: the compiler's arguments
/// and the stored form of attribute values (see ``SQLValueCoding``), with no
/// tie to one database's driver. Each store converts it to its driver's
/// type when it binds it.
public enum SQLValue: Sendable, Hashable {
    /// NULL.
    case null
    /// A 64-bit integer.
    case integer(Int64)
    /// A double-precision floating-point number.
    case real(Double)
    /// Text.
    case text(String)
    /// Bytes.
    case blob(Data)
}
