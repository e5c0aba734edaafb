import NIOCore
import StrataAuth
import StrataContext
import StrataModel
import StrataQuery
import StrataStore
import StrataWire

extension ServerCore {
    /// Saves one change set, all or nothing, conflicts resolved by the
    /// requested merge policy, and answers it (``response(to:outcome:)``).
    func save(_ request: Strata_V1_SaveRequest, clientName: String, identity: Identity? = nil, policy: AccessPolicy? = nil) async throws -> Strata_V1_SaveResponse {
        Self.response(to: request, outcome: try await saveOutcome(request, clientName: clientName, identity: identity, policy: policy))
    }

    /// Saves one change set: the request is decoded once into a
    /// ``SaveRequest`` and handed to ``Coordinator/save(_:)``, which picks
    /// the route. The save's author in history and notifications is the
    /// authenticated subject (see ``author(given:clientName:identity:)``).
    func saveOutcome(_ request: Strata_V1_SaveRequest, clientName: String, identity: Identity?, policy: AccessPolicy?) async throws -> SaveOutcome {
        let mergePolicy = try Self.mergePolicy(request.mergePolicy)
        try checkWritable(request)
        if let policy { try await requireVisible(request, policy: policy) }
        let save = try described(request, mergePolicy: mergePolicy, clientName: clientName, identity: identity, policy: policy)
        do {
            return try await coordinator.save(save)
        } catch let error as StrataError {
            throw try await refusal(error, inserts: save.inserts, names: request.inserts.map(\.temporaryID), policy: policy)
        }
    }

    /// ``saveOutcome(_:clientName:identity:policy:)`` for a caller bound by
    /// no access rules, answered through `completion` (exactly once)
    /// instead of a suspension: decoded and checked on the calling thread
    /// (`batch`'s event loop), then handed to ``Coordinator/save(_:finish:completion:)``,
    /// which writes a small insert with no task and finishes it on the
    /// loop, in `batch` with the other saves of its commit group. Same
    /// checks, outcome and errors. `completion` runs on the loop (for a
    /// save refused before anything is written, at once) or, for a save a
    /// context makes, in its task.
    func startSave(_ request: Strata_V1_SaveRequest, clientName: String, identity: Identity?, handingBackTo batch: EventLoopCompletionBatch,
                   completion: @escaping @Sendable (Result<SaveOutcome, any Error>) -> Void) {
        let save: SaveRequest
        do {
            let mergePolicy = try Self.mergePolicy(request.mergePolicy)
            try checkWritable(request)
            save = try described(request, mergePolicy: mergePolicy, clientName: clientName, identity: identity, policy: nil)
        } catch {
            return completion(.failure(error))
        }
        // The loop outlives the save: a connection (and the server's
        // shutdown) waits for its in-flight slots before its loop can go.
        coordinator.save(save, finish: { batch.submit($0) }) { result in
            completion(result.mapError { error in
                guard let error = error as? StrataError else { return error }
                return Self.refusal(error, inserts: save.inserts, names: request.inserts.map(\.temporaryID))
            })
        }
    }

    /// A save ``InsertSaveScan`` read from its frame, started as
    /// ``startSave(_:clientName:identity:handingBackTo:completion:)`` starts
    /// a decoded one, for a caller bound by no access rules (the scan did
    /// the decoding and the checks: it takes no save that writes to a
    /// read-only store).
    func startSave(_ scan: InsertSaveScan, handingBackTo batch: EventLoopCompletionBatch,
                   completion: @escaping @Sendable (Result<SaveOutcome, any Error>) -> Void) {
        // The closure keeps what a refusal names, not the whole save.
        let inserts = scan.save.inserts
        let names = scan.names
        coordinator.save(scan.save, finish: { batch.submit($0) }) { result in
            // An outcome is handed on as it is (mapping the result would
            // copy it).
            guard case .failure(let error) = result, let error = error as? StrataError else { return completion(result) }
            completion(.failure(Self.refusal(error, inserts: inserts, names: names)))
        }
    }

    /// A wire save decoded (``decode(_:)``) and described for the
    /// coordinator: merge policy, author (see
    /// ``author(given:clientName:identity:)``) and the caller's rules.
    private func described(_ request: Strata_V1_SaveRequest, mergePolicy: MergePolicy, clientName: String, identity: Identity?, policy: AccessPolicy?) throws -> SaveRequest {
        var save = try decode(request)
        save.mergePolicy = mergePolicy
        save.author = Self.author(given: request.author, clientName: clientName, identity: identity)
        save.saveGuards = policy?.saveGuards
        save.readRestriction = policy?.readRestriction
        return save
    }

    /// The answer to a save: each insert's temporary and permanent ID, the
    /// new version of every object inserted or updated, the objects deleted
    /// and updated.
    static func response(to request: Strata_V1_SaveRequest, outcome: SaveOutcome) -> Strata_V1_SaveResponse {
        response(names: request.inserts.map(\.temporaryID), outcome: outcome)
    }

    /// ``response(to:outcome:)`` for a save whose inserts the client named
    /// `names`, in order.
    static func response(names: [String], outcome: SaveOutcome) -> Strata_V1_SaveResponse {
        let changes = outcome.changes
        return Strata_V1_SaveResponse.with { response in
            response.inserted.reserveCapacity(names.count)
            for (name, id) in zip(names, outcome.insertedIDs) {
                response.inserted.append(Strata_V1_InsertedID.with {
                    $0.temporaryID = name
                    $0.id = id.uriRepresentation
                })
            }
            // Objects inserted, not inserts merged into a saved object
            // (whose version is the saved one's).
            for id in changes.inserted where changes.versions[id] == nil {
                response.versions[id.uriRepresentation] = 1
            }
            for (id, version) in changes.versions {
                response.versions[id.uriRepresentation] = version
            }
            if !changes.deleted.isEmpty { response.deleted = changes.deleted.map(\.uriRepresentation) }
            if !changes.updated.isEmpty { response.updated = changes.updated.keys.map(\.uriRepresentation).sorted() }
        }
    }

    /// A wire save as a ``SaveRequest``, every value decoded once; its
    /// inserts in the wire request's order. Refuses what names
    /// nothing it could save: an insert without a temporary ID or with one
    /// used twice, an unknown entity or configuration, an update or delete
    /// of a temporary ID, of an unknown entity or of a store not served
    /// here, a value that does not decode.
    func decode(_ request: Strata_V1_SaveRequest) throws -> SaveRequest {
        var save = SaveRequest()
        save.inserts.reserveCapacity(request.inserts.count)
        // Temporary IDs by name: a dictionary only for several inserts.
        var byName: [String: ObjectID] = [:]
        for insert in request.inserts {
            guard !insert.temporaryID.isEmpty else {
                throw WireError(.invalidArgument, "insert of '\(insert.entity)' without a temporary_id", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            guard model.containsEntity(named: insert.entity) else {
                throw WireError(.invalidArgument, "insert '\(insert.temporaryID)': unknown entity '\(insert.entity)'", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            let id = ObjectID.temporary(entityName: insert.entity)
            if request.inserts.count > 1 {
                guard byName.updateValue(id, forKey: insert.temporaryID) == nil else {
                    throw WireError(.invalidArgument, "temporary_id '\(insert.temporaryID)' is used by two inserts", strataCode: StrataError.Code.invalidValue.rawValue)
                }
            }
            save.inserts.append(SaveRequest.Insert(id: id, storeIdentifier: try storeIdentifier(configuration: insert.configuration, entity: insert.entity), values: [:]))
        }
        let single = save.inserts.count == 1 ? (name: request.inserts[0].temporaryID, id: save.inserts[0].id) : nil
        func resolveID(_ text: String) throws -> ObjectID {
            if let single, text == single.name { return single.id }
            if let id = byName[text] { return id }
            return try PropertyValue.parseObjectID(text)
        }
        for (index, insert) in request.inserts.enumerated() {
            save.inserts[index].values = try Self.decode(insert.values, entity: insert.entity, label: "insert '\(insert.temporaryID)'", resolveID: resolveID)
        }
        save.updates.reserveCapacity(request.updates.count)
        for update in request.updates {
            let id = try savedID(update.id, label: "update")
            var base: [String: PropertyValue] = [:]
            if update.baseVersion != 0 {
                for (key, value) in update.baseValues {
                    base[key] = try PropertyValue(wire: value, field: "update \(update.id): base value of '\(key)'", objectID: resolveID)
                }
            }
            let values = try Self.decode(update.values, entity: id.entityName, label: "update \(update.id)", resolveID: resolveID)
            save.updates.append(SaveRequest.Update(id: id, baseVersion: update.baseVersion, baseValues: base, values: values))
        }
        save.deletes = try request.deletes.map { delete in
            SaveRequest.Delete(id: try savedID(delete.id, label: "delete"), baseVersion: delete.baseVersion)
        }
        return save
    }

    /// Wire values decoded, each error naming `label` and the property; of
    /// several bad values, the first by name is reported.
    private static func decode(_ values: [String: Strata_V1_Value], entity: String, label: @autoclosure () -> String, resolveID: (String) throws -> ObjectID) throws -> [String: PropertyValue] {
        var decoded: [String: PropertyValue] = [:]
        decoded.reserveCapacity(values.count)
        do {
            for (key, wire) in values {
                decoded[key] = try PropertyValue(wire: wire, field: "\(label()): '\(entity).\(key)'", objectID: resolveID)
            }
        } catch {
            for key in values.keys.sorted() {
                if let wire = values[key] { _ = try PropertyValue(wire: wire, field: "\(label()): '\(entity).\(key)'", objectID: resolveID) }
            }
            throw error
        }
        return decoded
    }

    private static let temporaryPrefix = "strata-temp://"

    /// `text` with each temporary ID of `byURI` (``ObjectID/uriRepresentation``:
    /// `strata-temp://Entity/t` and a UUID) replaced by the client's name
    /// for it, in quotes; one pass over the text.
    static func naming(_ text: String, _ byURI: [String: String]) -> String {
        guard text.contains(temporaryPrefix) else { return text }
        var result = ""
        var rest = text[...]
        while let start = rest.range(of: temporaryPrefix) {
            result += rest[..<start.lowerBound]
            // The entity's name, then "/t" and a UUID's 36 characters.
            if let marker = rest[start.upperBound...].range(of: "/t"),
               let end = rest.index(marker.upperBound, offsetBy: 36, limitedBy: rest.endIndex),
               let name = byURI[String(rest[start.lowerBound..<end])] {
                result += "'\(name)'"
                rest = rest[end...]
            } else {
                result += temporaryPrefix
                rest = rest[start.upperBound...]
            }
        }
        return result + rest
    }

    /// The saved object an update or delete names; INVALID_ARGUMENT for a
    /// temporary ID or an unknown entity, NOT_FOUND for a store not served
    /// here.
    private func savedID(_ text: String, label: String) throws -> ObjectID {
        let id = try PropertyValue.parseObjectID(text)
        guard !id.isTemporary else {
            throw WireError(.invalidArgument, "\(label) \(text): a temporary ID names no saved object", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        guard model.containsEntity(named: id.entityName) else {
            throw WireError(.invalidArgument, "\(label) \(text): unknown entity '\(id.entityName)'", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        guard (try? coordinator.store(for: id)) != nil else {
            throw WireError(.notFound, "\(label) \(text): no store '\(id.storeIdentifier)' is served here", strataCode: StrataError.Code.objectNotFound.rawValue)
        }
        return id
    }

    /// A save's error as the client is answered: new objects named by the
    /// client's temporary IDs; for a rule-bound caller, nothing shown of
    /// objects it may not read.
    private func refusal(_ error: StrataError, inserts: [SaveRequest.Insert], names: [String], policy: AccessPolicy?) async throws -> any Error {
        var error = Self.renamed(error, inserts: inserts, names: names)
        if let answer = Self.propertyRefusal(error, inserts: inserts, names: names) { return answer }
        guard let policy else { return error }
        if error.code == .mergeConflict {
            // A conflict shows the stored values: only of objects the
            // caller may read. Otherwise it is refused as the guards would.
            let ids = error.conflicts.map(\.objectID)
            let readable = try await readableIDs(ids, policy: policy)
            if let hidden = ids.first(where: { !readable.contains($0) }) {
                return StrataError(.accessDenied, "the save conflicts with \(hidden.entityName) objects the caller may not read (rule \(hidden.entityName).read)")
            }
            // Their values may still name objects the caller may not read.
            error.conflicts = try await withoutHiddenReferences(error.conflicts, policy: policy)
        } else if error.code == .constraintConflict {
            // Uniqueness errors name the saved object holding the values:
            // not one the caller may not read.
            let named = error.details.flatMap { $0.split(separator: " ").filter { $0.hasPrefix("strata://") }.map(String.init) }
            let ids = named.compactMap { try? PropertyValue.parseObjectID($0) }
            let readable = Set(try await readableIDs(ids, policy: policy).map(\.uriRepresentation))
            error.details = error.details.map { line in
                named.filter { !readable.contains($0) }.reduce(line) { $0.replacingOccurrences(of: $1, with: "an object the caller may not read") }
            }
        }
        return error
    }

    /// A save's error as a caller bound by no rules is answered (new
    /// objects named by the client's temporary IDs).
    static func refusal(_ error: StrataError, inserts: [SaveRequest.Insert], names: [String]) -> any Error {
        let error = renamed(error, inserts: inserts, names: names)
        return propertyRefusal(error, inserts: inserts, names: names) ?? error
    }

    /// `error` with the temporary IDs the client never saw named as the
    /// client named them (`names`, in the order of `inserts`).
    private static func renamed(_ error: StrataError, inserts: [SaveRequest.Insert], names: [String]) -> StrataError {
        var error = error
        let texts = [error.message] + error.details + error.failures.map(\.message)
        if texts.contains(where: { $0.contains(temporaryPrefix) }) {
            let byURI = Dictionary(zip(inserts.lazy.map(\.id.uriRepresentation), names), uniquingKeysWith: { first, _ in first })
            error.message = naming(error.message, byURI)
            error.details = error.details.map { naming($0, byURI) }
            for index in error.failures.indices {
                error.failures[index].message = naming(error.failures[index].message, byURI)
            }
        }
        return error
    }

    /// For an error with property failures, its status with each failure's
    /// object named as the client named it; nil otherwise.
    private static func propertyRefusal(_ error: StrataError, inserts: [SaveRequest.Insert], names: [String]) -> StatusError? {
        guard !error.failures.isEmpty else { return nil }
        let names = Dictionary(zip(inserts.map(\.id), names), uniquingKeysWith: { first, _ in first })
        var status = error.status
        for index in status.propertyErrors.indices {
            if let failure = error.failures[safe: index], let name = names[failure.objectID] {
                status.propertyErrors[index].objectID = name
            }
        }
        return StatusError(status: status)
    }

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

    /// Refuses, before anything is touched, a save that writes to a
    /// read-only store: PERMISSION_DENIED with 134030.
    func checkWritable(_ request: Strata_V1_SaveRequest) throws {
        guard !coordinator.readOnlyStores.isEmpty else { return }
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
