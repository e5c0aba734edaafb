import StrataQuery

/// A column the PostgreSQL store keeps beside every text column, computed
/// by Strata from the text with the evaluator's own functions, so that
/// PostgreSQL compares what the evaluator compares.
package enum PostgresCompanion: Sendable, Hashable {
    /// The text folded for `[c]`, `[d]` or `[cd]` (``StringFolding``):
    /// `NAME__F1`, `NAME__F2`, `NAME__F3`.
    case folded(StringComparisonOptions)
    /// The units ``PostgresLike`` matches `LIKE` on, of the text folded
    /// with the options (none included); NULL when they are the (folded)
    /// text itself: `NAME__L0`…`NAME__L3`.
    case likeUnits(StringComparisonOptions)

    /// Every companion, in the order of their columns.
    package static let all: [PostgresCompanion] =
        PostgresSchema.foldings.map { .folded($0) } + ([[]] + PostgresSchema.foldings).map { .likeUnits($0) }

    /// The companion's column beside `column`.
    package func column(_ column: String) -> String {
        switch self {
        case .folded(let options): PostgresSchema.foldedColumn(column, options)
        case .likeUnits(let options): PostgresSchema.likeColumn(column, options)
        }
    }

    /// The companion of a cell of the text column (NULL for NULL).
    package func value(_ value: SQLValue) -> SQLValue {
        guard case .text(let text) = value else { return .null }
        switch self {
        case .folded(let options):
            return .text(StringFolding.fold(text, options))
        case .likeUnits(let options):
            return PostgresLike.units(options.isEmpty ? text : StringFolding.fold(text, options)).map(SQLValue.text) ?? .null
        }
    }

    /// The value of every companion (``all``, in order) of a cell of the
    /// text column, folding the text once per folding.
    package static func values(_ value: SQLValue) -> [SQLValue] {
        guard case .text(let text) = value else { return Array(repeating: .null, count: all.count) }
        let folded = PostgresSchema.foldings.map { StringFolding.fold(text, $0) }
        var values = folded.map(SQLValue.text)
        values.append(PostgresLike.units(text).map(SQLValue.text) ?? .null)
        for text in folded { values.append(PostgresLike.units(text).map(SQLValue.text) ?? .null) }
        return values
    }
}
