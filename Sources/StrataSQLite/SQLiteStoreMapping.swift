import NIOConcurrencyHelpers
import StrataQuery

/// The SQLite store's mapping: ``SQLStoreMapping`` with SQLite's own
/// per-entity values.
typealias SQLiteStoreMapping = SQLStoreMapping<SQLiteEntityExtras>

extension SQLStoreMapping where Extras == SQLiteEntityExtras {
    /// The SQLite mapping of `schema`.
    convenience init(schema: SQLSchema) {
        self.init(schema: schema, compiler: SQLQueryCompiler(schema: schema)) { _, table, _ in
            SQLiteEntityExtras(keyAllocation: KeyAllocationSQL(table: table))
        }
    }
}

/// What the SQLite store keeps per entity besides its mapping: the
/// statements that hand out its table's keys and the insert steps of the
/// last layout it saved. A class: shared by every save of the entity.
final class SQLiteEntityExtras: Sendable {
    /// The key-allocation statements of the entity's hierarchy table.
    let keyAllocation: KeyAllocationSQL
    /// The insert steps of the last layout saved (``SQLiteInsertPlan``).
    let lastInsertSteps = NIOLockedValueBox<SQLiteInsertPlan.CompiledSteps?>(nil)

    init(keyAllocation: KeyAllocationSQL) {
        self.keyAllocation = keyAllocation
    }
}

extension SQLStoreMapping where Extras == SQLiteEntityExtras {
    /// The most statements a connection of the store keeps prepared before
    /// `Database.boundedCachedStatement(sql:limit:)` finalizes its cached
    /// ones: room for 512 statements a client's requests shape, and for
    /// 64 the store's own model makes per entity and join table (its
    /// inserts, reads by key of each kept length, checks, join rows).
    var cachedStatementLimit: Int {
        512 + 64 * (entities.count + joinTables.count)
    }
}
