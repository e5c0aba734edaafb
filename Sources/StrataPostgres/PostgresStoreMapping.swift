import StrataModel
import StrataQuery

/// The PostgreSQL store's mapping: ``SQLStoreMapping`` with what the
/// PostgreSQL store keeps per entity.
typealias PostgresStoreMapping = SQLStoreMapping<PostgresEntityExtras>

extension SQLStoreMapping where Extras == PostgresEntityExtras {
    /// The PostgreSQL mapping of `schema`.
    convenience init(postgres schema: PostgresSchema) {
        self.init(schema: schema.layout, compiler: SQLQueryCompiler(postgres: schema)) { _, table, insertColumns in
            PostgresEntityExtras(schema: schema, table: table, insertColumns: insertColumns)
        }
    }
}

/// What the PostgreSQL store keeps per entity besides its mapping: the
/// head of its multi-row INSERT and which of its columns hold text (and so
/// have ``PostgresCompanion`` columns beside them).
final class PostgresEntityExtras: Sendable {
    /// `INSERT INTO "t" ("Z_PK", "Z_ENT", "Z_OPT", …, companions…) VALUES `.
    let insertHead: String
    /// The positions, in the insert columns, of the texts whose companions
    /// follow the insert columns (all of the first's, then the next's…).
    let textPositions: [Int]
    /// The companion column names of each text column, by column name.
    let companionColumns: [String: [String]]

    init(schema: PostgresSchema, table: String, insertColumns: [String]) {
        let q = SQLSchema.quote
        let layout = schema.layout
        var companions: [String: [String]] = [:]
        for column in layout.tables.first(where: { $0.name == table })?.columns ?? [] where schema.isText(column) {
            companions[column.name] = PostgresCompanion.all.map { $0.column(column.name) }
        }
        var positions: [Int] = []
        var names: [String] = []
        for (position, column) in insertColumns.enumerated() {
            guard let own = companions[column] else { continue }
            positions.append(position)
            names += own
        }
        let columns = [q("Z_PK"), q("Z_ENT"), q("Z_OPT")] + insertColumns.dropFirst(2).map(q) + names.map(q)
        self.insertHead = "INSERT INTO \(q(table)) (" + columns.joined(separator: ", ") + ") VALUES "
        self.textPositions = positions
        self.companionColumns = companions
    }

    /// How many companion cells follow an INSERT row's insert columns.
    var companionCellCount: Int { textPositions.count * PostgresCompanion.all.count }
}
