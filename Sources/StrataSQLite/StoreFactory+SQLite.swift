import StrataModel
import StrataStore

extension StoreFactory {
    /// Every store type of the embedded stack: ``StoreFactory/builtIn``
    /// (in-memory, binary) and SQLite.
    public static let standard = StoreFactory.builtIn
        .adding(.sqlite) { description, model in try await SQLiteStore(description: description, model: model) }
}
