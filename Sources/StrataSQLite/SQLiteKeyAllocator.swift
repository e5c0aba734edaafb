import GRDB
import StrataModel
import StrataStore

/// Hands out the primary keys of the inserts of one write transaction.
///
/// Each hierarchy table's highest key (the larger of `Z_PRIMARYKEY`'s record
/// and `MAX(Z_PK)`) is read once per transaction, the saves of a group
/// commit take ranges one after the other, and the highest key handed out
/// is recorded once, just before the commit (``record(_:)``): three
/// statements per table and transaction instead of per save. A save rolled
/// back to its savepoint leaves a gap; a key is never handed out twice.
struct SQLiteKeyAllocator {
    private struct Table {
        let name: String
        let root: String
        let sql: KeyAllocationSQL
        /// The next key to hand out.
        var next: Int64
    }

    /// The tables keys were taken from, in the order first taken. An
    /// array searched in order, not a dictionary: a transaction touches a
    /// handful of tables, and every save would hash a table name twice.
    private var tables: [Table] = []

    /// The first of `count` consecutive new keys of `table` (whose root
    /// entity is `root`); `path` names the store in errors.
    mutating func reserve(_ count: Int, table: String, root: String, sql: KeyAllocationSQL, db: Database, path: String) throws -> Int64 {
        if let index = tables.firstIndex(where: { $0.name == table }) {
            let first = tables[index].next
            let (after, overflow) = first.addingReportingOverflow(Int64(count))
            guard !overflow else { throw Self.exhausted(table, path: path) }
            tables[index].next = after
            return first
        }
        let highest = try Int64.fetchOne(db.cachedStatement(sql: sql.highest), arguments: [root]) ?? 0
        let (first, overflow) = highest.addingReportingOverflow(1)
        let (after, overflowAfter) = first.addingReportingOverflow(Int64(count))
        guard !overflow, !overflowAfter else { throw Self.exhausted(table, path: path) }
        tables.append(Table(name: table, root: root, sql: sql, next: after))
        return first
    }

    /// Records in `Z_PRIMARYKEY` the highest key handed out per table.
    func record(_ db: Database) throws {
        for table in tables {
            try db.cachedStatement(sql: table.sql.record).execute(arguments: [table.root, table.next - 1])
        }
    }

    private static func exhausted(_ table: String, path: String) -> StrataError {
        StrataError(.storeSave, "store \(path): primary keys of \(table) are exhausted")
    }
}
