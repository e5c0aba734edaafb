import StrataModel
import StrataQuery
import StrataStore

/// Routes every entity to the store of its configuration, so contexts see
/// several stores as one.
///
/// One store per configuration; an entity listed in several configurations
/// is fetched from all of their stores, and an insert of it must name the
/// store. A store with no configuration (`nil`) holds every entity and must
/// be the only one.
public final class Coordinator: Sendable {
    /// The model.
    public let model: ObjectModel
    /// The stores, in the order they were added.
    public let stores: [any PersistentStore]
    /// Resolves predicates against the model.
    public let resolver: PredicateResolver
    /// Where committed change sets are published.
    public let changes: ChangeHub
    /// The value transformers of Transformable attributes.
    public let transformers: ValueTransformerRegistry
    /// Transient attributes computed in code, by entity and attribute.
    public let transientRules: [String: [String: TransientRule]]
    /// Snapshots last read by object ID, shared by the contexts.
    public let rowCache: RowCache
    /// The stores that refuse writes, in the order they were added (read
    /// once: asking a store copies its description).
    public let readOnlyStores: [any PersistentStore]

    /// Entity layouts for setting values, by entity.
    let layouts = ModelCache<ObjectGraph.EntityLayout>()
    /// What saving needs of each entity, by entity.
    let entityPlans = ModelCache<EntityPlan>()

    private let storesByIdentifier: [String: any PersistentStore]
    private let storesByEntity: [String: [any PersistentStore]]

    /// Creates a coordinator over open stores. Fails when a `nil`
    /// configuration store is not alone, when two stores serve the same
    /// configuration, or when two stores share an identifier.
    ///
    /// `rowCacheCapacity` bounds the ``rowCache`` (0, the default, turns it
    /// off: every load reads its store).
    public init(model: ObjectModel, stores: [any PersistentStore], transformers: ValueTransformerRegistry = ValueTransformerRegistry(), transientRules: [String: [String: TransientRule]] = [:], rowCacheCapacity: Int = 0) throws {
        if stores.count > 1, let unnamed = stores.first(where: { $0.configurationName == nil }) {
            throw StrataError(.storeOpen, "store \(unnamed.storeDescription.displayName) has no configuration: a store without one must be the coordinator's only store")
        }
        var seenConfigurations: [String: String] = [:]
        var byIdentifier: [String: any PersistentStore] = [:]
        var byEntity: [String: [any PersistentStore]] = [:]
        for store in stores {
            if let name = store.configurationName {
                if let other = seenConfigurations[name] {
                    throw StrataError(.storeOpen, "configuration '\(name)' is served by two stores: \(other) and \(store.storeDescription.displayName)")
                }
                seenConfigurations[name] = store.storeDescription.displayName
            }
            guard byIdentifier[store.identifier] == nil else {
                throw StrataError(.storeOpen, "two stores have the identifier \(store.identifier) (the same file opened twice?)")
            }
            byIdentifier[store.identifier] = store
            for entity in store.entityNames { byEntity[entity, default: []].append(store) }
        }
        self.model = model
        self.stores = stores
        self.readOnlyStores = stores.filter { $0.isReadOnly }
        self.resolver = PredicateResolver(model: model)
        let rowCache = RowCache(capacity: rowCacheCapacity)
        self.rowCache = rowCache
        if rowCache.isEnabled {
            self.changes = ChangeHub(beforeDelivery: { @Sendable changes in rowCache.invalidate(changes) })
        } else {
            self.changes = ChangeHub()
        }
        self.transformers = transformers
        self.transientRules = transientRules
        self.storesByIdentifier = byIdentifier
        self.storesByEntity = byEntity
    }

    /// The store with this identifier.
    public func store(identifier: String) -> (any PersistentStore)? {
        storesByIdentifier[identifier]
    }

    /// The stores that hold an entity.
    public func stores(for entityName: String) -> [any PersistentStore] {
        storesByEntity[entityName] ?? []
    }

    /// The store an object ID belongs to.
    public func store(for objectID: ObjectID) throws -> any PersistentStore {
        guard let store = storesByIdentifier[objectID.storeIdentifier] else {
            throw StrataError(.objectNotFound, "\(objectID): no store with identifier '\(objectID.storeIdentifier)' is loaded")
        }
        return store
    }

    /// The current snapshots of objects of one store, through the row
    /// cache; objects that no longer exist are left out.
    public func snapshots(for ids: [ObjectID], in store: any PersistentStore) async throws -> [Snapshot] {
        guard rowCache.isEnabled else { return try await store.snapshots(for: ids) }
        let (found, missing, generation) = rowCache.lookup(ids)
        guard !missing.isEmpty else { return found }
        let read = try await store.snapshots(for: missing)
        rowCache.store(read, readAt: generation)
        return found + read
    }

    /// The save plan of an entity, made once; nil for a name the model
    /// does not have (names come from clients: only the model's own are
    /// kept).
    func entityPlan(of entity: String) -> EntityPlan? {
        guard model.containsEntity(named: entity) else { return nil }
        return entityPlans.value(for: entity) {
            let model = self.model
            let layout = layouts.value(for: entity) { ObjectGraph.EntityLayout(entity: entity, model: model) }
            return EntityPlan(entity: entity, model: model, resolver: resolver, layout: layout)
        }
    }

    /// Closes every store.
    public func close() async throws {
        changes.finish()
        var failures: [String] = []
        for store in stores {
            do { try await store.close() } catch { failures.append("\(store.storeDescription.displayName): \(error)") }
        }
        if !failures.isEmpty {
            throw StrataError(.storeSave, "\(failures.count) store(s) failed to close", details: failures)
        }
    }
}
