import Foundation

/// Equality and ordering of values per ``ComparisonDomain``, exactly as
/// SQLite orders the stored form of the same values:
///
/// - strings and URIs by Unicode scalar values, which is UTF-8 byte order
///   and SQLite's `BINARY` collation (not Swift's `==`, which equates
///   canonically equivalent strings);
/// - `Data` byte-lexicographically, a proper prefix first (SQLite's `memcmp`
///   then length);
/// - UUIDs by their 16 bytes;
/// - Decimals exactly (see ``compare(_:_:)-(Decimal,Decimal)``);
/// - integers and Doubles numerically (`-0.0 == 0.0`).
public enum ValueComparison {
    /// Three-way comparison of strings by Unicode scalar values: negative,
    /// zero or positive.
    @inlinable
    public static func compare(_ a: String, _ b: String) -> Int {
        var a = a
        var b = b
        return a.withUTF8 { pa in b.withUTF8 { pb in compareBytes(pa, pb) } }
    }

    /// Whether two strings have the same Unicode scalars.
    @inlinable
    public static func equal(_ a: String, _ b: String) -> Bool {
        var a = a
        var b = b
        return a.withUTF8 { pa in
            b.withUTF8 { pb in pa.count == pb.count && compareBytes(pa, pb) == 0 }
        }
    }

    /// Three-way byte-lexicographic comparison of `Data`.
    public static func compare(_ a: Data, _ b: Data) -> Int {
        a.withUnsafeBytes { ra in
            b.withUnsafeBytes { rb in
                compareBytes(ra.bindMemory(to: UInt8.self), rb.bindMemory(to: UInt8.self))
            }
        }
    }

    /// Three-way comparison of UUIDs by their 16 bytes.
    public static func compare(_ a: UUID, _ b: UUID) -> Int {
        withUnsafeBytes(of: a.uuid) { ra in
            withUnsafeBytes(of: b.uuid) { rb in
                compareBytes(ra.bindMemory(to: UInt8.self), rb.bindMemory(to: UInt8.self))
            }
        }
    }

    /// Three-way exact comparison of Decimals with Foundation's own
    /// comparison (callers map NaN to nil first). ``DecimalKey``'s byte order
    /// is property-tested to agree with it.
    public static func compare(_ a: Decimal, _ b: Decimal) -> Int {
        a < b ? -1 : (a == b ? 0 : 1)
    }

    /// Three-way comparison of Doubles (callers map NaN to nil first).
    @inlinable
    public static func compare(_ a: Double, _ b: Double) -> Int {
        a < b ? -1 : (a > b ? 1 : 0)
    }

    /// Three-way comparison of integers.
    @inlinable
    public static func compare(_ a: Int64, _ b: Int64) -> Int {
        a < b ? -1 : (a > b ? 1 : 0)
    }

    /// `memcmp` order, a proper prefix first.
    @inlinable
    public static func compareBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = Swift.min(a.count, b.count)
        if common > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let result = memcmp(pa, pb, common)
            if result != 0 { return Int(result) }
        }
        return a.count - b.count
    }
}
