import StrataModel

/// Receives stored rows one value at a time as a store reads them, with no
/// ``Snapshot`` made: for callers that turn rows straight into bytes (the
/// server's answers). A row is `beginRow`, then its non-nil values in the
/// order its snapshot would list them, then `endRow`; the values are what
/// the snapshot would hold. A throw from any of them stops the reading.
public protocol StoredRowVisitor {
    /// A row of an entity begins: its object is
    /// `strata://<storeIdentifier>/<entityName>/p<key>`, at `version`.
    /// Both names are their UTF-8 bytes, valid only during the call (no
    /// string is handed over, and retained, for every row).
    mutating func beginRow(storeIdentifier: UnsafeRawBufferPointer, entityName: UnsafeRawBufferPointer, key: Int64, version: Int64) throws
    /// One non-nil value of the current row, of the property whose name
    /// is these UTF-8 bytes, valid only during the call (no string is
    /// handed over, and retained, for every value).
    mutating func value(_ name: UnsafeRawBufferPointer, _ value: StoredValue) throws
    /// The current row has no more values.
    mutating func endRow() throws
}

/// One non-nil stored value, as ``StoredRowVisitor`` receives it: plain
/// text without a `String` made, anything else as the snapshot holds it.
public enum StoredValue {
    /// `.string` whose UTF-8 bytes (ASCII, without U+0000) are these,
    /// valid only during the call.
    case text(UnsafeRawBufferPointer)
    /// `.decimal` whose text (plain notation, as `Decimal.description`
    /// writes it) is these ASCII bytes, valid only during the call.
    case decimalText(UnsafeRawBufferPointer)
    /// Any other value, as the snapshot holds it.
    case value(PropertyValue)
}
