/// The rows of one entity hierarchy, keyed by primary key, with the
/// hierarchy's primary-key counter.
struct RowTable: Sendable, Hashable {
    /// Rows by primary key.
    var rows: [Int64: StoredRow]
    /// The last primary key handed out; keys are never reused, even after
    /// the row holding the largest one is deleted.
    var lastPrimaryKey: Int64

    /// An empty table.
    init(rows: [Int64: StoredRow] = [:], lastPrimaryKey: Int64 = 0) {
        self.rows = rows
        self.lastPrimaryKey = lastPrimaryKey
    }
}
