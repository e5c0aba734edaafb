import Foundation
import StrataModel
import StrataQuery
import StrataStore

/// A scratch pad of managed objects over a coordinator's stores, isolated
/// as an actor: it tracks inserted, updated and deleted objects, validates
/// and saves them, refreshes them, and merges changes saved elsewhere.
///
/// Objects (``ManagedObject``) live inside the context's isolation: work
/// with them in ``perform(_:)`` and pass ``ObjectID``s between contexts.
/// Like any actor, a context is reentrant: while one call awaits a store,
/// another may run.
public actor Context {
    /// The coordinator whose stores the context reads and writes.
    public nonisolated let coordinator: Coordinator
    /// A name for logs and change sets.
    public nonisolated let name: String?
    /// How saves resolve conflicts.
    public var mergePolicy: MergePolicy
    /// Who saves (Core Data's `transactionAuthor`): recorded with every
    /// save in persistent history, so that consumers can tell writers apart.
    public var transactionAuthor: String?
    /// A unique token naming this context as the origin of its change sets.
    public nonisolated let token: String
    /// The conditions each store's change set must meet, checked by the
    /// store inside the save's transaction (a server's access rules for
    /// the caller); nil: none. A context with guards saves every change
    /// set through the store's checked route (never streamed).
    public nonisolated let saveGuards: SaveGuardProvider?
    /// What the context may read of each entity (a server's read rules
    /// for the caller): AND-ed into every fetch, count, fetched property
    /// and predicate test it runs, so limits, counts and sorting stay
    /// right; nil: everything.
    public nonisolated let readRestriction: ReadRestriction?

    let graph: ObjectGraph
    var model: ObjectModel { coordinator.model }
    /// Objects found to no longer exist in their store.
    var vanished: Set<ObjectID> = []
    /// The coordinator's entity plans this context used (a bulk save
    /// then takes no lock per object).
    var entityPlanCache: [String: EntityPlan] = [:]
    /// The entity, template and store of the last insert that named no
    /// store (inserts usually come in runs of one entity; the
    /// coordinator's stores never change).
    private var lastInsert: (entityName: String, template: InsertTemplate, storeIdentifier: String)?
    var fetchedPredicateCache: [String: StrataQuery.Predicate] = [:]
    private var mergeTask: Task<Void, Never>?
    private var isSaving = false
    private var saveWaiters: [CheckedContinuation<Void, Never>] = []

    /// Creates a context over a coordinator; its saves are recorded in
    /// persistent history with `transactionAuthor`.
    public init(coordinator: Coordinator, name: String? = nil, mergePolicy: MergePolicy = .error, transactionAuthor: String? = nil, saveGuards: SaveGuardProvider? = nil, readRestriction: ReadRestriction? = nil) {
        self.coordinator = coordinator
        self.saveGuards = saveGuards
        self.readRestriction = readRestriction
        self.name = name
        self.mergePolicy = mergePolicy
        self.transactionAuthor = transactionAuthor
        // Not UUID(): a server makes a context per request, and UUID()
        // opens the system random source each time.
        self.token = TemporaryKeySource.next().uuidString
        self.graph = ObjectGraph(model: coordinator.model, transformers: coordinator.transformers, transientRules: coordinator.transientRules, sharedLayouts: coordinator.layouts)
    }

    deinit {
        mergeTask?.cancel()
    }

    /// Runs `body` inside the context's isolation, where managed objects
    /// can be used; returns a `Sendable` result.
    public func perform<T: Sendable>(_ body: @Sendable (isolated Context) async throws -> T) async rethrows -> T {
        try await body(self)
    }

    /// Changes the merge policy.
    public func setMergePolicy(_ policy: MergePolicy) {
        mergePolicy = policy
    }

    /// Changes the author recorded in persistent history for later saves.
    public func setTransactionAuthor(_ author: String?) {
        transactionAuthor = author
    }

    /// Merges every change set other contexts save through the coordinator,
    /// as they are published, until the context is released.
    public func automaticallyMergeChanges() {
        guard mergeTask == nil else { return }
        let stream = coordinator.changes.subscribe()
        let token = self.token
        mergeTask = Task { [weak self] in
            for await changes in stream where changes.origin != token {
                guard let self else { return }
                try? await self.merge(changes)
            }
        }
    }

    /// Waits until no other save of this context is running.
    func acquireSaveLock() async {
        guard isSaving else {
            isSaving = true
            return
        }
        await withCheckedContinuation { saveWaiters.append($0) }
    }

    /// Lets the next waiting save run.
    func releaseSaveLock() {
        if saveWaiters.isEmpty {
            isSaving = false
        } else {
            saveWaiters.removeFirst().resume()
        }
    }

    // MARK: State

    /// Whether there are unsaved changes.
    public var hasChanges: Bool { !graph.changedObjects.isEmpty }
    /// Objects inserted and not saved.
    public var insertedObjects: [ManagedObject] { graph.changedObjects.filter { $0.isInserted && !$0.isDeleted } }
    /// Objects changed and not saved.
    public var updatedObjects: [ManagedObject] { graph.changedObjects.filter(\.isUpdated) }
    /// Objects deleted and not saved.
    public var deletedObjects: [ManagedObject] { graph.changedObjects.filter { $0.isDeleted && !$0.isInserted } }
    /// Every registered object.
    public var registeredObjects: [ManagedObject] { Array(graph.registered.values) }

    // MARK: Objects

    /// Inserts a new object of an entity, with its default values. When the
    /// entity is in several stores, `storeIdentifier` says which one.
    public func insert(_ entityName: String, into storeIdentifier: String? = nil) throws -> ManagedObject {
        try insert(entityName, id: .temporary(entityName: entityName), into: storeIdentifier)
    }

    /// ``insert(_:into:)`` with the new object's temporary ID given (a
    /// save request names its objects before they exist).
    func insert(_ entityName: String, id: ObjectID, into storeIdentifier: String?) throws -> ManagedObject {
        if storeIdentifier == nil, let last = lastInsert, last.entityName == entityName {
            return makeInserted(id, template: last.template, storeIdentifier: last.storeIdentifier)
        }
        let template = try insertTemplate(of: entityName)
        let stores = coordinator.stores(for: entityName)
        let store: any PersistentStore
        if let storeIdentifier {
            guard let named = stores.first(where: { $0.identifier == storeIdentifier }) else {
                throw StrataError(.invalidValue, "store \(storeIdentifier) does not hold entity '\(entityName)'")
            }
            store = named
        } else {
            guard let only = stores.first else {
                throw StrataError(.invalidValue, "no loaded store holds entity '\(entityName)'")
            }
            guard stores.count == 1 else {
                throw StrataError(.invalidValue, "entity '\(entityName)' is in \(stores.count) stores (\(stores.map { $0.configurationName ?? "default" }.joined(separator: ", "))): say which with insert(_:into:)")
            }
            store = only
            lastInsert = (entityName, template, store.identifier)
        }
        return makeInserted(id, template: template, storeIdentifier: store.identifier)
    }

    /// A new inserted object of `entityName` for a store, registered.
    private func makeInserted(_ id: ObjectID, template: InsertTemplate, storeIdentifier: String) -> ManagedObject {
        let object = ManagedObject(objectID: id, storeIdentifier: storeIdentifier, graph: graph)
        object.layout = template.layout
        object.isInserted = true
        object.changes = template.defaults
        object.transients = template.transientDefaults
        graph.register(object, isNew: true)
        return object
    }

    /// The save plan of an entity; nil for a name the model does not have.
    func entityPlan(of entityName: String) -> EntityPlan? {
        if let cached = entityPlanCache[entityName] { return cached }
        guard let plan = coordinator.entityPlan(of: entityName) else { return nil }
        entityPlanCache[entityName] = plan
        return plan
    }

    /// The insert template of a concrete entity; throws for unknown and
    /// abstract entities.
    func insertTemplate(of entityName: String) throws -> InsertTemplate {
        guard let plan = entityPlan(of: entityName) else {
            throw StrataError(.invalidValue, "unknown entity '\(entityName)'")
        }
        return try plan.template.get()
    }

    /// The object with this ID: registered, or a new fault (no I/O).
    public func object(with id: ObjectID) -> ManagedObject {
        graph.object(for: id)
    }

    /// The object with this ID, loaded; 133000 when it does not exist.
    public func existingObject(with id: ObjectID) async throws -> ManagedObject {
        let object = graph.object(for: id)
        if object.isFault { try await load([object]) }
        return object
    }

    /// Loads a fault's values (no-op for loaded objects).
    public func load(_ object: ManagedObject) async throws {
        if object.isFault { try await load([object]) }
    }

    /// Loads faults in one request per store; 133000 names any that no longer exist.
    func load(_ objects: [ManagedObject], tolerateMissing: Bool = false) async throws {
        let faults = objects.filter(\.isFault)
        guard !faults.isEmpty else { return }
        var byStore: [String: [ManagedObject]] = [:]
        for object in faults { byStore[object.objectID.storeIdentifier, default: []].append(object) }
        var missing: [ObjectID] = []
        for (_, group) in byStore {
            let store = try coordinator.store(for: group[0].objectID)
            let snapshots = try await coordinator.snapshots(for: group.map(\.objectID), in: store)
            var found: Set<ObjectID> = []
            for snapshot in snapshots {
                found.insert(snapshot.objectID)
                apply(snapshot)
            }
            missing += group.map(\.objectID).filter { !found.contains($0) }
        }
        guard !missing.isEmpty else { return }
        vanished.formUnion(missing)
        if !tolerateMissing {
            throw StrataError(.objectNotFound, "\(missing.count) object(s) no longer exist in their store: \(missing.map(\.uriRepresentation).joined(separator: ", "))")
        }
    }

    /// Registers (or refreshes the committed state of) the object a snapshot describes.
    @discardableResult
    func apply(_ snapshot: Snapshot) -> ManagedObject {
        let object = graph.object(for: snapshot.objectID)
        if object.committed == nil || snapshot.version != object.version {
            if object.version != snapshot.version { object.committedToMany.removeAll() }
            object.committed = snapshot.values
            object.version = snapshot.version
            // Drop changes that now equal the committed value.
            if !object.changes.isEmpty {
                for (key, value) in object.changes where (snapshot.values[key] ?? .null) == value {
                    object.changes[key] = nil
                }
            }
        }
        if !vanished.isEmpty { vanished.remove(snapshot.objectID) }
        return object
    }

    /// The destination of a to-one relationship, loaded.
    public func destination(of object: ManagedObject, _ key: String) async throws -> ManagedObject? {
        try await load(object)
        guard case .object(let id) = try object.value(forKey: key) else { return nil }
        return try await existingObject(with: id)
    }

    /// The destinations of a to-many relationship, loaded (in order for
    /// ordered relationships).
    public func destinations(of object: ManagedObject, _ key: String) async throws -> [ManagedObject] {
        let ids = try await destinationIDs(of: object, key)
        let objects = ids.map { graph.object(for: $0) }
        try await load(objects)
        return objects
    }

    /// The destination IDs of a to-many relationship, loading the list if needed.
    public func destinationIDs(of object: ManagedObject, _ key: String) async throws -> [ObjectID] {
        try await loadList(key, of: object)
        return try object.destinationIDs(forKey: key)
    }

    /// Loads the stored list of a to-many relationship when it is not known.
    func loadList(_ key: String, of object: ManagedObject) async throws {
        guard let relationship = model.relationship(named: key, in: object.entityName), relationship.isToMany else {
            _ = try object.destinationIDs(forKey: key) // throws the precise error
            return
        }
        if relationship.isTransient || object.isInserted || object.committedToMany[key] != nil { return }
        if case .replaced? = object.toManyChanges[key] { return }
        let store = try coordinator.store(for: object.objectID)
        object.committedToMany[key] = try await store.destinations(of: key, for: object.objectID)
    }

    /// Evaluates `body` over managed objects, loading faults and lists it
    /// could not read and evaluating again, until it reads everything.
    func evaluateLoading<T>(_ body: (ManagedObjectAccessor) throws -> T) async throws -> T {
        for _ in 0..<16 {
            let missing = MissingData(vanished: vanished)
            let result = try body(ManagedObjectAccessor(graph: graph, missing: missing))
            if missing.isEmpty { return result }
            try await load(Array(missing.faults.values), tolerateMissing: true)
            for (object, key) in missing.lists { try await loadList(key, of: object) }
        }
        throw StrataError(.unsupported, "evaluation kept finding unloaded objects after 16 rounds of loading")
    }
}
