import StrataModel

/// Opens the store a ``StoreDescription`` describes, with the opener
/// registered for its type.
///
/// ``builtIn`` opens the stores of this module (in-memory and binary).
/// Each store module adds its own, so that a program links only the
/// stores it uses: StrataSQLite's `StoreFactory.standard` adds SQLite.
///
/// ```swift
/// import StrataSQLite
/// let store = try await StoreFactory.standard.open(description, model: model)
/// ```
public struct StoreFactory: Sendable {
    /// Opens a store of one type from its description and the model (the
    /// factory has checked the configuration and the value transformers
    /// first).
    public typealias Opener = @Sendable (StoreDescription, ObjectModel) async throws -> any PersistentStore

    private var openers: [StoreDescription.StoreType: Opener]

    /// A factory that opens no type of store.
    public init() {
        openers = [:]
    }

    /// The stores of this module: in-memory and binary.
    public static let builtIn = StoreFactory()
        .adding(.inMemory) { description, model in try await InMemoryStore(description: description, model: model) }
        .adding(.binary) { description, model in try await BinaryStore(description: description, model: model) }

    /// This factory, with `opener` for stores of `type` (in place of any
    /// it had).
    public func adding(_ type: StoreDescription.StoreType, _ opener: @escaping Opener) -> StoreFactory {
        var result = self
        result.openers[type] = opener
        return result
    }

    /// The store types this factory opens.
    public var types: Set<StoreDescription.StoreType> { Set(openers.keys) }

    /// Opens (creating if needed) the store. Fails with 134080 when it cannot
    /// be opened (also when this factory has no opener for its type), 134100
    /// when the model does not fit it, and when the model names a value
    /// transformer the registry lacks.
    public func open(
        _ description: StoreDescription,
        model: ObjectModel,
        transformers: ValueTransformerRegistry = ValueTransformerRegistry()
    ) async throws -> any PersistentStore {
        try StoreOpening.checkConfiguration(description, model: model)
        try StoreOpening.checkTransformers(description, model: model, transformers: transformers)
        if let opener = openers[description.type] {
            return try await opener(description, model)
        }
        switch description.type {
        case .remote:
            throw StrataError(.storeOpen, "\(description.displayName): remote stores are opened through a server connection (StrataClient's RemoteContainer), not from a description alone")
        case .sqlite:
            throw StrataError(.storeOpen, "\(description.displayName): this store factory does not open SQLite stores (import StrataSQLite and use StoreFactory.standard)")
        case .postgres:
            throw StrataError(.storeOpen, "\(description.displayName): this store factory does not open PostgreSQL stores (import StrataPostgres and add them with addingPostgres())")
        case .inMemory, .binary:
            throw StrataError(.storeOpen, "\(description.displayName): this store factory does not open \(description.type.rawValue) stores (StoreFactory.builtIn does)")
        }
    }
}
