import Foundation
import StrataModel
import StrataQuery
import StrataStore

/// A model and its stores, loaded together, with a main context and new
/// background contexts on demand.
public final class PersistentContainer: Sendable {
    /// The model (validated).
    public let model: ObjectModel
    /// The coordinator over the loaded stores.
    public let coordinator: Coordinator
    /// The main context.
    public let viewContext: Context

    /// Validates the model, opens every store with `factory` (with a row
    /// cache of `rowCacheCapacity` snapshots in the coordinator; 0 = none),
    /// and fails with one error listing each store that failed
    /// (134080 / 134100 …) and why.
    ///
    /// `factory` names the store types the program links:
    /// ``StoreFactory/builtIn`` (in-memory, binary), or StrataSQLite's
    /// `StoreFactory.standard` (those and SQLite).
    public init(
        model: ObjectModel,
        storeDescriptions: [StoreDescription],
        factory: StoreFactory,
        transformers: ValueTransformerRegistry = ValueTransformerRegistry(),
        transientRules: [String: [String: TransientRule]] = [:],
        rowCacheCapacity: Int = 0
    ) async throws {
        try ModelValidator.validate(model)
        var stores: [any PersistentStore] = []
        var failures: [String] = []
        var firstCode: StrataError.Code?
        var failedStores = 0
        for description in storeDescriptions {
            do {
                stores.append(try await factory.open(description, model: model, transformers: transformers))
            } catch {
                let strata = error as? StrataError
                failedStores += 1
                firstCode = firstCode ?? strata?.code
                failures.append("\(description.displayName): \(strata.map { "error \($0.code.rawValue): \($0.message)" } ?? "\(error)")")
                for detail in strata?.details ?? [] { failures.append("\(description.displayName): \(detail)") }
            }
        }
        guard failures.isEmpty else {
            for store in stores { try? await store.close() }
            throw StrataError(firstCode ?? .storeOpen, "\(failedStores) of \(storeDescriptions.count) store(s) failed to load", details: failures)
        }
        self.model = model
        self.coordinator = try Coordinator(model: model, stores: stores, transformers: transformers, transientRules: transientRules, rowCacheCapacity: rowCacheCapacity)
        self.viewContext = Context(coordinator: coordinator, name: "view")
    }

    /// A new context over the same stores.
    public func newBackgroundContext(name: String? = nil, mergePolicy: MergePolicy = .error) -> Context {
        Context(coordinator: coordinator, name: name, mergePolicy: mergePolicy)
    }

    /// Closes every store.
    public func close() async throws {
        try await coordinator.close()
    }
}
