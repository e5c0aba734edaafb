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
/// head of its multi-row INSERT and where the folded copies of its text
/// columns come from.
final class PostgresEntityExtras: Sendable {
    /// A folded copy written beside a text column of an INSERT row.
    struct FoldedCell: Sendable {
        /// The position of the text in the row's insert columns.
        var source: Int
        /// The folding.
        var options: StringComparisonOptions
    }

    /// `INSERT INTO "t" ("Z_PK", "Z_ENT", "Z_OPT", …, folded copies…) VALUES `.
    let insertHead: String
    /// The folded copies, in their order after the insert columns.
    let foldedCells: [FoldedCell]
    /// Folded-copy column names of each text column, by column name.
    let foldedColumns: [String: [(column: String, options: StringComparisonOptions)]]

    init(schema: PostgresSchema, table: String, insertColumns: [String]) {
        let q = SQLSchema.quote
        let layout = schema.layout
        var folded: [String: [(column: String, options: StringComparisonOptions)]] = [:]
        for column in layout.tables.first(where: { $0.name == table })?.columns ?? [] where schema.isText(column) {
            folded[column.name] = PostgresSchema.foldings.map { (PostgresSchema.foldedColumn(column.name, $0), $0) }
        }
        var cells: [FoldedCell] = []
        var names: [String] = []
        for (position, column) in insertColumns.enumerated() {
            for (name, options) in folded[column] ?? [] {
                cells.append(FoldedCell(source: position, options: options))
                names.append(name)
            }
        }
        let columns = [q("Z_PK"), q("Z_ENT"), q("Z_OPT")] + insertColumns.dropFirst(2).map(q) + names.map(q)
        self.insertHead = "INSERT INTO \(q(table)) (" + columns.joined(separator: ", ") + ") VALUES "
        self.foldedCells = cells
        self.foldedColumns = folded
    }
}
