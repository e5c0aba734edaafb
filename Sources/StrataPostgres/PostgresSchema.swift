import StrataModel
import StrataQuery

/// The PostgreSQL tables of a store: the same layout as the SQLite store's
/// (``SQLSchema``: table, column and index names, `Z_PK`, `Z_ENT`,
/// `Z_OPT`, join tables, order columns), with PostgreSQL's column types and,
/// beside every string column, its ``PostgresCompanion`` columns: folded
/// copies for `[c]`, `[d]` and `[cd]`, and the units `LIKE` matches.
///
/// Column types: integers `bigint`; Booleans `smallint` (0 and 1, compared
/// as the evaluator compares them, as numbers); Double, Float and Date
/// (seconds since 2001) `double precision`; Decimal `numeric` (exact);
/// String, URI and object-ID text `text COLLATE "C"` (ordered by code
/// point, the evaluator's order); Binary, Transformable and the rest
/// `bytea`; UUID `uuid`. Keys, entity numbers and versions are `bigint`.
///
/// PostgreSQL cuts identifiers at 63 bytes; a layout with a longer name
/// (after the companions' `__F1`…`__L3` suffixes) is refused, as is one
/// where a column's name is a companion's of another.
package struct PostgresSchema: Sendable {
    /// The layout.
    package let layout: SQLSchema

    /// The folding options kept as columns beside each string column.
    package static let foldings: [StringComparisonOptions] = [.caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]]

    /// The name of the column holding `column`'s values folded with
    /// `options`.
    package static func foldedColumn(_ column: String, _ options: StringComparisonOptions) -> String {
        "\(column)__F\(options.rawValue)"
    }

    /// The name of the column holding the ``PostgresLike`` units of
    /// `column`'s values folded with `options` (none included).
    package static func likeColumn(_ column: String, _ options: StringComparisonOptions) -> String {
        "\(column)__L\(options.rawValue)"
    }

    /// The longest identifier PostgreSQL keeps whole.
    package static let identifierLimit = 63

    /// The schema of `layout`; 134080 naming an identifier PostgreSQL would cut.
    package init(layout: SQLSchema) throws(StrataError) {
        self.layout = layout
        var names: [String] = []
        for table in layout.tables {
            names.append(table.name)
            var columns: Set<String> = []
            for column in table.columns {
                var own = [column.name]
                if isText(column) { own += PostgresCompanion.all.map { $0.column(column.name) } }
                for name in own where !columns.insert(name).inserted {
                    throw StrataError(.storeOpen, "the PostgreSQL store cannot hold table '\(table.name)': column '\(name)' is also the name of a copy it keeps beside a text column")
                }
                names += own
            }
        }
        for join in layout.joinTables { names.append(join.name) }
        for index in layout.indexes { names.append(index.name) }
        if let long = names.first(where: { $0.utf8.count > Self.identifierLimit }) {
            throw StrataError(.storeOpen, "the PostgreSQL store cannot hold '\(long)': PostgreSQL cuts names longer than \(Self.identifierLimit) bytes")
        }
    }

    /// The attribute type of an attribute column, nil for other columns.
    package func attributeType(of column: SQLSchema.Column) -> AttributeType? {
        guard case .attribute(let entity, let name) = column.role else { return nil }
        return layout.model.attribute(named: name, in: entity)?.type
    }

    /// Whether `column` holds text (and has companions).
    package func isText(_ column: SQLSchema.Column) -> Bool {
        switch attributeType(of: column) {
        case .string?, .uri?: true
        default: false
        }
    }

    /// The PostgreSQL type of a column.
    package func columnType(_ column: SQLSchema.Column) -> String {
        switch column.role {
        case .primaryKey: return "bigint PRIMARY KEY"
        case .entityNumber, .version: return "bigint NOT NULL"
        case .foreignKey, .order: return "bigint"
        case .attribute:
            switch attributeType(of: column) {
            case .integer16?, .integer32?, .integer64?: return "bigint"
            case .boolean?: return "smallint"
            case .double?, .float?, .date?: return "double precision"
            case .decimal?: return "numeric"
            case .string?, .uri?, .objectID?: return "text COLLATE \"C\""
            case .uuid?: return "uuid"
            case .binary?, .transformable?, .undefined?, .composite?, nil: return "bytea"
            }
        }
    }

    /// The statements creating every table and index (tables, join
    /// tables, indexes), with quoted identifiers and no values, in the
    /// session's schema (`search_path`).
    package func createStatements() -> [String] {
        let quote = SQLSchema.quote
        return layout.createStatements(keyType: "bigint") { column in
            var definitions = [quote(column.name) + " " + columnType(column)]
            if isText(column) {
                definitions += PostgresCompanion.all.map { quote($0.column(column.name)) + " text COLLATE \"C\"" }
            }
            return definitions
        }
    }
}
