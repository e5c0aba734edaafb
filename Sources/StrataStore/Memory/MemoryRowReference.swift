import StrataModel

/// One row handed to the evaluator: its primary key and its contents.
struct MemoryRowReference: Sendable {
    /// The row's primary key.
    var primaryKey: Int64
    /// The row.
    var row: StoredRow
}
