import StrataModel

/// Opens the store a ``StoreDescription`` describes.
public enum StoreFactory {
    /// Opens (creating if needed) the store. Fails with 134080 when it cannot
    /// be opened, 134100 when the model does not fit it, and when the model
    /// names a value transformer the registry lacks.
    public static func open(
        _ description: StoreDescription,
        model: ObjectModel,
        transformers: ValueTransformerRegistry = ValueTransformerRegistry()
    ) async throws -> any PersistentStore {
        try StoreOpening.checkConfiguration(description, model: model)
        try StoreOpening.checkTransformers(description, model: model, transformers: transformers)
        switch description.type {
        case .sqlite:
            return try await SQLiteStore(description: description, model: model)
        case .inMemory:
            return try await InMemoryStore(description: description, model: model)
        case .binary:
            return try await BinaryStore(description: description, model: model)
        case .remote:
            throw StrataError(.storeOpen, "\(description.displayName): remote stores are opened through a server connection (StrataClient's RemoteContainer), not from a description alone")
        }
    }
}
