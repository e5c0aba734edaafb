import Foundation
import Logging
import StrataContext
import StrataModel
import StrataStore
import StrataWire

/// The remote counterpart of `PersistentContainer`: a coordinator whose
/// stores are a server's (``RemoteStore``s), so contexts work exactly as
/// over local stores: they track changes, save them as one change set per
/// store, resolve version conflicts with their merge policy, refresh, and
/// merge the changes other clients save (pushed by the server and
/// published on the coordinator's change hub, so contexts that
/// `automaticallyMergeChanges()` pick them up).
public final class RemoteContainer: Sendable {
    /// The connection.
    public let client: StrataClient
    /// The coordinator over the remote stores.
    public let coordinator: Coordinator
    private let pushes: Task<Void, Never>

    /// Connects, checks that the server serves the same model (134100
    /// when its version hash differs) and opens one remote store per
    /// store the server serves.
    public init(
        model: ObjectModel,
        configuration: ClientConfiguration,
        transformers: ValueTransformerRegistry = ValueTransformerRegistry(),
        transientRules: [String: [String: TransientRule]] = [:]
    ) async throws {
        let client = StrataClient(configuration: configuration)
        let hello = try await client.connect()
        guard hello.modelVersionHash == Data(model.modelVersionHash) else {
            let ours = Set(model.entityVersionHashes.compactMap { name, hash in hello.entityVersionHashes[name] == Data(hash) ? nil : name })
            let theirs = Set(hello.entityVersionHashes.keys).subtracting(model.entityVersionHashes.keys)
            await client.close()
            throw StrataError(.incompatibleVersionHash, "the server at \(configuration.host):\(configuration.port) serves model '\(hello.modelName)', whose version hashes differ from this model's: entities \((ours.union(theirs)).sorted().joined(separator: ", "))")
        }
        let served = try await client.model()
        let stores: [any PersistentStore] = served.configurations.map {
            RemoteStore(client: client, model: model, configuration: $0)
        }
        let coordinator = try Coordinator(model: model, stores: stores, transformers: transformers, transientRules: transientRules)
        let notifications = try await client.subscribe()
        let ownName = configuration.clientName
        self.client = client
        self.coordinator = coordinator
        self.pushes = Task {
            for await note in notifications {
                // This container's own saves are already on the hub.
                if note.origin == ownName { continue }
                guard let changes = try? Self.changeSet(note) else { continue }
                coordinator.changes.publish(changes)
            }
        }
    }

    deinit {
        pushes.cancel()
    }

    /// A new context over the remote stores.
    public func newContext(name: String? = nil, mergePolicy: MergePolicy = .error) -> Context {
        Context(coordinator: coordinator, name: name, mergePolicy: mergePolicy)
    }

    /// Ends the push subscription and closes the connection.
    public func close() async {
        pushes.cancel()
        coordinator.changes.finish()
        await client.close()
    }

    /// A pushed notification as the change set local contexts merge.
    static func changeSet(_ note: Strata_V1_ChangeNotification) throws -> ChangeSet {
        var changes = ChangeSet(contextName: note.origin, origin: "remote:\(note.origin)")
        for object in note.inserted {
            let id = try PropertyValue.parseObjectID(object.id)
            changes.inserted.append(id)
            changes.versions[id] = object.version
        }
        for object in note.updated {
            let id = try PropertyValue.parseObjectID(object.id)
            changes.updated[id] = Set(object.changedKeys)
            changes.versions[id] = object.version
        }
        changes.deleted = try note.deleted.map { try PropertyValue.parseObjectID($0.id) }
        return changes
    }
}
