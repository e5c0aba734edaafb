import Foundation
import StrataModel
import StrataQuery
import StrataStore
import StrataWire

/// One of a server's stores, seen through a ``StrataClient``: a
/// `PersistentStore` like the local ones, so the same `Context` works local
/// or remote. Fetches run on the server's store (predicate text, variables,
/// sort and window travel); saves travel as one change set whose version
/// conflicts come back as store conflicts for the local context's merge
/// policy to resolve.
public actor RemoteStore: PersistentStore {
    /// The server store's UUID (permanent IDs carry it).
    public nonisolated let identifier: String
    /// Describes the store: type `.remote`, its configuration, read-only flag.
    public nonisolated let storeDescription: StoreDescription
    /// The model, which must match the server's.
    public nonisolated let model: ObjectModel
    /// The entities the store holds.
    public nonisolated let entityNames: Set<String>
    private let client: StrataClient

    /// A store the server describes in its GetModel answer.
    public init(client: StrataClient, model: ObjectModel, configuration: Strata_V1_ConfigurationInfo) {
        self.client = client
        self.model = model
        self.identifier = configuration.storeID
        let name = configuration.name.isEmpty ? nil : configuration.name
        self.storeDescription = StoreDescription(
            url: URL(string: "strata://\(client.configuration.host):\(client.configuration.port)/\(configuration.storeID)"),
            type: .remote,
            configuration: name,
            isReadOnly: configuration.readOnly
        )
        var entities = Set<String>()
        for entity in model.entityNames(inConfiguration: name) {
            entities.formUnion(model.hierarchy(of: entity))
        }
        self.entityNames = entities
    }

    public func fetchSnapshots(_ fetch: ResolvedFetch) async throws -> [Snapshot] {
        let result = try await remote { try await client.fetch(try request(for: fetch, resultType: .objects)) }
        return try result.objects.map(Self.snapshot)
    }

    public func fetchObjectIDs(_ fetch: ResolvedFetch) async throws -> [ObjectID] {
        let result = try await remote { try await client.fetch(try request(for: fetch, resultType: .objectIds)) }
        return try result.objectIDs.map(PropertyValue.parseObjectID)
    }

    public func count(_ fetch: ResolvedFetch) async throws -> Int {
        try await remote { try await client.fetch(try request(for: fetch, resultType: .count)) }.count
    }

    public func snapshots(for objectIDs: [ObjectID]) async throws -> [Snapshot] {
        guard !objectIDs.isEmpty else { return [] }
        let response = try await remote {
            try await client.refresh(objectIDs.map(\.uriRepresentation), skipFetched: true)
        }
        return try response.objects.map(Self.snapshot)
    }

    public func destinations(of relationship: String, for objectID: ObjectID) async throws -> [ObjectID] {
        let response = try await remote {
            try await client.refresh([objectID.uriRepresentation], includeRelationships: [relationship], skipFetched: true)
        }
        guard let object = response.objects.first else {
            throw StrataError(.objectNotFound, "\(objectID) no longer exists in its store")
        }
        guard case .objects(let ids) = try object.value(relationship) else { return [] }
        return ids
    }

    public func save(_ changes: StoreChanges) async throws -> StoreSaveResult {
        guard !storeDescription.isReadOnly else {
            throw StrataError(.storeSave, "store \(storeDescription.displayName) is read-only: it refuses every save")
        }
        let request = saveRequest(changes)
        do {
            let response = try await client.save(request)
            var temporaryIDs: [ObjectID] = []
            var insertedIDs: [ObjectID] = []
            for (insert, inserted) in zip(changes.inserts, response.inserted) {
                temporaryIDs.append(insert.temporaryID)
                insertedIDs.append(try PropertyValue.parseObjectID(inserted.id))
            }
            // The response lists the inserts' versions (1) too: keep the updates'.
            let inserted = Set(insertedIDs)
            var versions: [ObjectID: Int64] = [:]
            for (id, version) in response.versions {
                let objectID = try PropertyValue.parseObjectID(id)
                if !inserted.contains(objectID) { versions[objectID] = version }
            }
            return .committed(StoreCommit(temporaryIDs: temporaryIDs, insertedIDs: insertedIDs, updatedVersions: versions))
        } catch let error as StrataClientError where error.strataCode == StrataError.Code.mergeConflict.rawValue {
            return .conflicts(try error.conflicts.map { conflict in
                let id = try PropertyValue.parseObjectID(conflict.objectID)
                var snapshot: Snapshot?
                if !conflict.persistedDeleted {
                    var values: [String: PropertyValue] = [:]
                    for (key, value) in conflict.persistedValues {
                        values[key] = try PropertyValue(wire: value, field: "\(id).\(key)")
                    }
                    snapshot = Snapshot(objectID: id, version: conflict.currentVersion, values: values)
                }
                return StoreConflict(objectID: id, expectedVersion: conflict.expectedVersion, currentVersion: conflict.currentVersion, currentSnapshot: snapshot)
            })
        } catch let error as StrataClientError {
            throw Self.strataError(error)
        }
    }

    /// The client belongs to the container; closing a store closes nothing.
    public func close() async throws {}

    // MARK: Translation

    private func request(for fetch: ResolvedFetch, resultType: Strata_V1_ResultType) throws -> Strata_V1_FetchRequest {
        guard let source = fetch.source else {
            throw StrataError(.unsupported, "a remote store runs fetches resolved from a FetchRequest; this one has no source request")
        }
        return try Strata_V1_FetchRequest.with {
            $0.entity = fetch.entityName
            $0.predicate = source.predicate?.description ?? ""
            $0.variables = try fetch.variables.mapValues(Self.wire)
            $0.sort = source.sortDescriptors.map { descriptor in
                Strata_V1_SortKey.with {
                    $0.key = descriptor.keyPath
                    $0.descending = !descriptor.ascending
                    $0.caseInsensitive = descriptor.caseInsensitive
                }
            }
            $0.limit = UInt32(clamping: fetch.limit ?? 0)
            $0.offset = UInt32(clamping: fetch.offset)
            $0.excludeSubentities = !fetch.includesSubentities
            $0.resultType = resultType
            $0.storeID = identifier
        }
    }

    private static func wire(_ variable: VariableValue) throws -> Strata_V1_VariableValue {
        switch variable {
        case .value(let value):
            return Strata_V1_VariableValue.with { $0.value = value.wire }
        case .list(let values):
            return Strata_V1_VariableValue.with { $0.list = Strata_V1_ValueList.with { $0.values = values.map(\.wire) } }
        case .object(let id, let values):
            return Strata_V1_VariableValue.with {
                $0.object = Strata_V1_ObjectReference.with {
                    $0.id = id.uriRepresentation
                    $0.values = values.mapValues(\.wire)
                }
            }
        }
    }

    private func saveRequest(_ changes: StoreChanges) -> Strata_V1_SaveRequest {
        Strata_V1_SaveRequest.with { request in
            request.mergePolicy = .error
            request.inserts = changes.inserts.map { insert in
                Strata_V1_InsertedObject.with {
                    $0.temporaryID = insert.temporaryID.uriRepresentation
                    $0.entity = insert.temporaryID.entityName
                    $0.configuration = storeDescription.configuration ?? ""
                    $0.values = Self.values(insert.values, toMany: insert.toMany)
                }
            }
            request.updates = changes.updates.map { update in
                Strata_V1_UpdatedObject.with {
                    $0.id = update.objectID.uriRepresentation
                    $0.baseVersion = changes.checksVersions ? update.expectedVersion : 0
                    $0.values = Self.values(update.values, toMany: update.toMany)
                }
            }
            request.deletes = changes.deletes.map { delete in
                Strata_V1_DeletedObject.with {
                    $0.id = delete.objectID.uriRepresentation
                    $0.baseVersion = changes.checksVersions ? delete.expectedVersion : 0
                }
            }
        }
    }

    /// Values for the wire: nil travels as a value with no kind, so a
    /// property set to nil is cleared on the server.
    private static func values(_ values: PropertyValues, toMany: [String: [ObjectID]]) -> [String: Strata_V1_Value] {
        var wire: [String: Strata_V1_Value] = [:]
        wire.reserveCapacity(values.count + toMany.count)
        for (key, value) in values { wire[key] = value.wire }
        for (key, ids) in toMany { wire[key] = PropertyValue.objects(ids).wire }
        return wire
    }

    private static func snapshot(_ state: Strata_V1_ObjectState) throws -> Snapshot {
        Snapshot(objectID: try PropertyValue.parseObjectID(state.id), version: state.version, values: try state.propertyValues())
    }

    /// Runs a client call, turning its errors into `StrataError`s.
    private func remote<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StrataClientError {
            throw Self.strataError(error)
        } catch let error as WireError {
            throw StrataError(.invalidValue, error.message)
        }
    }

    /// A refused request as the error a local store would have thrown.
    static func strataError(_ error: StrataClientError) -> StrataError {
        let code: StrataError.Code
        if error.strataCode != 0 {
            code = StrataError.Code(rawValue: error.strataCode)
        } else {
            code = error.code == .unavailable ? .storeTimeout : .storeSave
        }
        return StrataError(code, "server: \(error.message)", details: error.details)
    }
}
