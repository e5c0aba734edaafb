import StrataAuth
import StrataContext
import StrataModel
import StrataQuery
import StrataStore
import StrataWire

extension ServerCore {
    /// Applies one change set in a fresh context and saves it: all or
    /// nothing, conflicts resolved by the requested merge policy. The
    /// save's author in history and notifications is the authenticated
    /// subject (see ``author(given:clientName:identity:)``).
    func save(_ request: Strata_V1_SaveRequest, clientName: String, identity: Identity? = nil, policy: AccessPolicy? = nil) async throws -> Strata_V1_SaveResponse {
        let mergePolicy = try Self.mergePolicy(request.mergePolicy)
        let author = Self.author(given: request.author, clientName: clientName, identity: identity)
        try checkWritable(request)
        // The direct route writes without a context and without guards:
        // only for callers no access rule binds.
        if policy == nil, let response = try await insertDirectly(request, author: author, policy: mergePolicy) { return response }
        if let policy { try await requireVisible(request, policy: policy) }
        let context = makeContext(clientName: author, mergePolicy: mergePolicy, author: author, policy: policy)
        let model = self.model
        do {
            return try await context.perform { context in
                // Inserts first, so values anywhere in the save can name them.
                var inserted: [(temporaryID: String, object: ManagedObject)] = []
                var temporaryIDs: [String: ObjectID] = [:]
                for insert in request.inserts {
                    guard !insert.temporaryID.isEmpty else {
                        throw WireError(.invalidArgument, "insert of '\(insert.entity)' without a temporary_id", strataCode: StrataError.Code.invalidValue.rawValue)
                    }
                    guard temporaryIDs[insert.temporaryID] == nil else {
                        throw WireError(.invalidArgument, "temporary_id '\(insert.temporaryID)' is used by two inserts", strataCode: StrataError.Code.invalidValue.rawValue)
                    }
                    guard model.entity(named: insert.entity) != nil else {
                        throw WireError(.invalidArgument, "insert '\(insert.temporaryID)': unknown entity '\(insert.entity)'", strataCode: StrataError.Code.invalidValue.rawValue)
                    }
                    let object = try context.insert(insert.entity, into: try self.storeIdentifier(configuration: insert.configuration, entity: insert.entity))
                    temporaryIDs[insert.temporaryID] = object.objectID
                    inserted.append((insert.temporaryID, object))
                }
                let resolveID: (String) throws -> ObjectID = { text in
                    if let id = temporaryIDs[text] { return id }
                    return try PropertyValue.parseObjectID(text)
                }
                for (insert, (_, object)) in zip(request.inserts, inserted) {
                    try Self.apply(insert.values, to: object, label: "insert '\(insert.temporaryID)'", model: model, resolveID: resolveID)
                }
                for update in request.updates {
                    let object = try await Self.existing(update.id, in: context, label: "update")
                    if update.baseVersion != 0 {
                        var base: [String: PropertyValue] = [:]
                        for (key, value) in update.baseValues {
                            base[key] = try PropertyValue(wire: value, field: "update \(update.id): base value of '\(key)'", objectID: resolveID)
                        }
                        try context.rebase(object, onVersion: update.baseVersion, values: base)
                    }
                    try Self.apply(update.values, to: object, label: "update \(update.id)", model: model, resolveID: resolveID)
                }
                for delete in request.deletes {
                    let object = try await Self.existing(delete.id, in: context, label: "delete")
                    if delete.baseVersion != 0 {
                        try context.rebase(object, onVersion: delete.baseVersion)
                    }
                    try await context.delete(object)
                }
                let changes: ChangeSet
                do {
                    changes = try await context.save()
                } catch let error as StrataError where !error.failures.isEmpty {
                    // Name inserted objects by the client's temporary IDs.
                    let names = Dictionary(inserted.map { ($0.object.objectID, $0.temporaryID) }, uniquingKeysWith: { first, _ in first })
                    var status = error.status
                    for index in status.propertyErrors.indices {
                        if let failure = error.failures[safe: index], let name = names[failure.objectID] {
                            status.propertyErrors[index].objectID = name
                        }
                    }
                    throw StatusError(status: status)
                }
                return Strata_V1_SaveResponse.with { response in
                    response.inserted = inserted.map { temporaryID, object in
                        Strata_V1_InsertedID.with {
                            $0.temporaryID = temporaryID
                            $0.id = object.objectID.uriRepresentation
                        }
                    }
                    for id in changes.inserted where changes.versions[id] == nil {
                        response.versions[id.uriRepresentation] = 1
                    }
                    for (id, version) in changes.versions {
                        response.versions[id.uriRepresentation] = version
                    }
                    response.deleted = changes.deleted.map(\.uriRepresentation)
                    response.updated = changes.updated.keys.map(\.uriRepresentation).sorted()
                }
            }
        } catch let error as StrataError where policy != nil && error.code == .mergeConflict {
            // A conflict shows the stored values: only of objects the
            // caller may read. Otherwise it is refused as the guards would.
            let ids = error.conflicts.map(\.objectID)
            let readable = try await readableIDs(ids, policy: policy)
            if let hidden = ids.first(where: { !readable.contains($0) }) {
                throw StrataError(.accessDenied, "the save conflicts with \(hidden.entityName) objects the caller may not read (rule \(hidden.entityName).read)")
            }
            // Their values may still name objects the caller may not read.
            var redacted = error
            redacted.conflicts = try await withoutHiddenReferences(error.conflicts, policy: policy)
            throw redacted
        } catch let error as StrataError where policy != nil && error.code == .constraintConflict {
            // Uniqueness errors name the saved object holding the values:
            // not one the caller may not read.
            var redacted = error
            let named = error.details.flatMap { $0.split(separator: " ").filter { $0.hasPrefix("strata://") }.map(String.init) }
            let ids = named.compactMap { try? PropertyValue.parseObjectID($0) }
            let readable = Set(try await readableIDs(ids, policy: policy).map(\.uriRepresentation))
            redacted.details = error.details.map { line in
                named.filter { !readable.contains($0) }.reduce(line) { $0.replacingOccurrences(of: $1, with: "an object the caller may not read") }
            }
            throw redacted
        }
    }

    /// A save of new objects only, with attribute values only, through
    /// the coordinator's direct insert (no context: see
    /// Refuses, as if they did not exist, the saved objects a rule-bound
    /// caller's save names (updates, deletes, references in values) that
    /// it may not read: the answer is the one for objects that are gone,
    /// so that a save cannot probe which hidden objects exist.
    func requireVisible(_ request: Strata_V1_SaveRequest, policy: AccessPolicy) async throws {
        var named: [ObjectID] = []
        func collect(_ text: String) {
            if let id = try? PropertyValue.parseObjectID(text), !id.isTemporary { named.append(id) }
        }
        for update in request.updates { collect(update.id) }
        for delete in request.deletes { collect(delete.id) }
        for values in request.inserts.map(\.values) + request.updates.map(\.values) {
            for value in values.values {
                switch value.kind {
                case .object(let text)?: collect(text)
                case .objects(let list)?: list.ids.forEach(collect)
                default: break
                }
            }
        }
        guard !named.isEmpty else { return }
        let readable = try await readableIDs(named, policy: policy)
        var seen: Set<ObjectID> = []
        let gone = named.filter { !readable.contains($0) && seen.insert($0).inserted }
        guard gone.isEmpty else {
            throw StrataError(.objectNotFound, "\(gone.count) object(s) no longer exist in their store: \(gone.map(\.uriRepresentation).joined(separator: ", "))")
        }
    }

    /// Who a save is recorded as made by. On a server that authenticates,
    /// the subject, so that authorship cannot be claimed by another client;
    /// an author the client gave is kept beside it: `alice (importer)`.
    /// Otherwise the author the client gave, or its name.
    static func author(given: String, clientName: String, identity: Identity?) -> String {
        guard let identity else { return given.isEmpty ? clientName : given }
        return given.isEmpty || given == identity.subject ? identity.subject : "\(identity.subject) (\(given))"
    }

    /// ``Coordinator/insertDirectly(_:author:contextName:checksVersions:)``).
    /// Nil, having written nothing, when the save needs a context: then
    /// the context's save answers, errors included, as for any other save.
    func insertDirectly(_ request: Strata_V1_SaveRequest, author: String, policy: MergePolicy) async throws -> Strata_V1_SaveResponse? {
        guard request.updates.isEmpty, request.deletes.isEmpty, !request.inserts.isEmpty,
              request.inserts.count <= Coordinator.directInsertLimit else { return nil }
        var inserts: [DirectInsert] = []
        inserts.reserveCapacity(request.inserts.count)
        // Temporary IDs must be unique (a set only when there are several).
        var temporaryIDs = Set<String>()
        let single = request.inserts.count == 1
        for insert in request.inserts {
            guard !insert.temporaryID.isEmpty, single || temporaryIDs.insert(insert.temporaryID).inserted else { return nil }
            var storeIdentifier: String?
            if !insert.configuration.isEmpty {
                guard let store = coordinator.stores.first(where: { $0.configurationName == insert.configuration }) else { return nil }
                storeIdentifier = store.identifier
            }
            var values: [String: PropertyValue] = [:]
            values.reserveCapacity(insert.values.count)
            for (key, wire) in insert.values {
                // Object IDs (relationships) and bad values: the context's save says what is wrong.
                guard let value = try? PropertyValue(wire: wire, field: key, objectID: { _ in throw WireError(.invalidArgument, "") }) else { return nil }
                values[key] = value
            }
            inserts.append(DirectInsert(entity: insert.entity, storeIdentifier: storeIdentifier, values: values))
        }
        guard let result = try await coordinator.insertDirectly(inserts, author: author, contextName: author, checksVersions: policy != .overwrite) else { return nil }
        return Strata_V1_SaveResponse.with { response in
            response.inserted.reserveCapacity(result.insertedIDs.count)
            for (insert, id) in zip(request.inserts, result.insertedIDs) {
                let uri = id.uriRepresentation
                response.inserted.append(Strata_V1_InsertedID.with {
                    $0.temporaryID = insert.temporaryID
                    $0.id = uri
                })
                response.versions[uri] = 1
            }
        }
    }

    /// Refuses, before anything is touched, a save that writes to a
    /// read-only store: PERMISSION_DENIED with 134030.
    func checkWritable(_ request: Strata_V1_SaveRequest) throws {
        let readOnly = coordinator.stores.filter(\.isReadOnly)
        guard !readOnly.isEmpty else { return }
        func refuse(_ what: String, _ store: any PersistentStore) -> WireError {
            WireError(.permissionDenied, "\(what): the store of configuration \(store.configurationName ?? "default") (\(store.identifier)) is read-only; nothing was saved", strataCode: StrataError.Code.storeSave.rawValue)
        }
        for insert in request.inserts {
            let stores = coordinator.stores(for: insert.entity)
            // An insert that names no configuration goes to the entity's only store.
            let target = insert.configuration.isEmpty
                ? (stores.count == 1 ? stores.first : nil)
                : stores.first { $0.configurationName == insert.configuration }
            if let target, target.isReadOnly {
                throw refuse("insert '\(insert.temporaryID)' of \(insert.entity)", target)
            }
        }
        for text in request.updates.map(\.id) + request.deletes.map(\.id) {
            guard let id = ObjectID(uriRepresentation: text), let store = try? coordinator.store(for: id) else { continue }
            if store.isReadOnly { throw refuse("change to \(text)", store) }
        }
    }

    /// The store an insert goes to: the one serving `configuration`, or
    /// `nil` to let the context choose (entities in one store only).
    func storeIdentifier(configuration: String, entity: String) throws -> String? {
        guard !configuration.isEmpty else { return nil }
        guard let store = coordinator.stores.first(where: { $0.configurationName == configuration }) else {
            throw WireError(.invalidArgument, "insert of '\(entity)': no store serves configuration '\(configuration)'", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        return store.identifier
    }

    /// Loads the object an update or delete names; NOT_FOUND when it is gone.
    static func existing(_ text: String, in context: isolated Context, label: String) async throws -> ManagedObject {
        let id = try PropertyValue.parseObjectID(text)
        guard !id.isTemporary else {
            throw WireError(.invalidArgument, "\(label) \(text): a temporary ID names no saved object", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        guard context.coordinator.model.entity(named: id.entityName) != nil else {
            throw WireError(.invalidArgument, "\(label) \(text): unknown entity '\(id.entityName)'", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        guard (try? context.coordinator.store(for: id)) != nil else {
            throw WireError(.notFound, "\(label) \(text): no store '\(id.storeIdentifier)' is served here", strataCode: StrataError.Code.objectNotFound.rawValue)
        }
        return try await context.existingObject(with: id)
    }

    /// Sets wire values on an object: attributes and to-one relationships
    /// with setValue, to-many relationships by replacing the list.
    static func apply(_ values: [String: Strata_V1_Value], to object: ManagedObject, label: String, model: ObjectModel, resolveID: (String) throws -> ObjectID) throws {
        // Sorted so the first error reported is the same every time.
        for key in values.keys.sorted() {
            guard let wire = values[key] else { continue }
            if model.attribute(named: key, in: object.entityName)?.isTransient == true
                || model.relationship(named: key, in: object.entityName)?.isTransient == true {
                // A request's context ends with the request: a transient
                // value would be dropped without a word.
                throw WireError(.invalidArgument, "\(label): '\(object.entityName).\(key)' is transient: it is not stored, so a save cannot set it", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            let value = try PropertyValue(wire: wire, field: "\(label): '\(object.entityName).\(key)'", objectID: resolveID)
            if case .objects(let ids) = value {
                try object.setDestinations(ids, forKey: key)
            } else if value.isNull, model.relationship(named: key, in: object.entityName)?.isToMany == true {
                try object.setDestinations([], forKey: key)
            } else {
                try object.setValue(value, forKey: key)
            }
        }
    }

    /// The embedded merge policy for a wire one.
    static func mergePolicy(_ policy: Strata_V1_MergePolicy) throws -> MergePolicy {
        switch policy {
        case .error: .error
        case .mergeByPropertyStoreTrump: .mergeByPropertyStoreTrump
        case .mergeByPropertyObjectTrump: .mergeByPropertyObjectTrump
        case .overwrite: .overwrite
        case .rollback: .rollback
        case .UNRECOGNIZED(let raw):
            throw WireError(.invalidArgument, "unknown merge policy \(raw)", strataCode: StrataError.Code.invalidValue.rawValue)
        }
    }
}

extension Array {
    /// The element at `index`, or nil when out of range.
    subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
