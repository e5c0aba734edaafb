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
        let root: String
        let sql: KeyAllocationSQL
        /// The next key to hand out.
        var next: Int64
    }

    private var tables: [String: Table] = [:]
    private var order: [String] = []

    /// The first of `count` consecutive new keys of `table` (whose root
    /// entity is `root`); `path` names the store in errors.
    mutating func reserve(_ count: Int, table: String, root: String, sql: KeyAllocationSQL, db: Database, path: String) throws -> Int64 {
        var entry: Table
        if let known = tables[table] {
            entry = known
        } else {
            let highest = try Int64.fetchOne(db.cachedStatement(sql: sql.highest), arguments: [root]) ?? 0
            let (next, overflow) = highest.addingReportingOverflow(1)
            guard !overflow else { throw Self.exhausted(table, path: path) }
            entry = Table(root: root, sql: sql, next: next)
            order.append(table)
        }
        let first = entry.next
        let (after, overflow) = first.addingReportingOverflow(Int64(count))
        guard !overflow else { throw Self.exhausted(table, path: path) }
        entry.next = after
        tables[table] = entry
        return first
    }

    /// Records in `Z_PRIMARYKEY` the highest key handed out per table.
    func record(_ db: Database) throws {
        for name in order {
            guard let table = tables[name] else { continue }
            try db.cachedStatement(sql: table.sql.record).execute(arguments: [table.root, table.next - 1])
        }
    }

    private static func exhausted(_ table: String, path: String) -> StrataError {
        StrataError(.storeSave, "store \(path): primary keys of \(table) are exhausted")
    }
}
