import StrataModel
import StrataQuery
import StrataStore

extension SQLMigrationPlanner {
    /// The SQLite store's planner, from the store's `description`.
    init(stored: SQLiteStoreMetadata, target: SQLiteStoreMetadata, model: ObjectModel, schema: SQLSchema, description: StoreDescription) {
        let q = SQLSchema.quote
        self.init(
            stored: stored, target: target, model: model, schema: schema, place: "store \(description.displayName)",
            configuration: description.configuration, migratesAutomatically: description.migratesAutomatically,
            backend: Backend(
                createStatements: schema.createStatements(),
                insertKeyRow: "INSERT OR IGNORE INTO \(q(SQLiteStoreMetadata.primaryKeyTableName)) (\(q("Z_NAME")), \(q("Z_MAX"))) VALUES (?, 0)"
            )
        )
    }
}
