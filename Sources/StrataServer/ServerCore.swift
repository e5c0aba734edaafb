import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Tracing
import StrataAuth
import StrataContext
import StrataModel
import StrataQuery
import StrataStore
import StrataWire
import Synchronization

/// What every connection of one server shares: the coordinator (and so
/// the store actors), the configuration, the figures and the answers that
/// never change (hello, model).
final class ServerCore: Sendable {
    let coordinator: Coordinator
    let configuration: ServerConfiguration
    let stats = ServerStats()
    /// Predicates of fetches and subscriptions, parsed once per text.
    let predicates = PredicateCache()
    /// Compiled statements of the fetches answered on the event loop, a
    /// cache per loop.
    let fetchPlans = PerEventLoop { _ in FetchPlanCache() }
    let serverID = UUID().uuidString
    let logger: Logger
    let helloResponse: Strata_V1_HelloResponse
    let modelResponse: Strata_V1_GetModelResponse
    /// Failed hellos per source address: counted and slowed.
    let authFailures = AuthFailureThrottle()
    /// Whether a backup runs now (one at a time per server: each copies a
    /// whole store to disk).
    let backupRunning = Atomic<Bool>(false)
    /// Removes the stores' paths from answers.
    let redactor: PathRedactor
    /// Whether every store takes saves with a completion handler
    /// (``CompletionSavingStore``): only then does a save started on an
    /// event loop check its values there (``startSave(_:clientName:identity:handingBackTo:completion:)``),
    /// since it then needs no task; otherwise the whole save runs in one.
    let savesWithoutTasks: Bool
    /// What every Stats answer warns of (a network served without TLS or
    /// authentication, as `--insecure` allows).
    let warnings: [String]
    /// Who hellos speak for; nil when the server asks no one.
    let authenticator: Authenticator?
    /// The access rules; nil when every authenticated client may do everything.
    var accessControl: AccessControl? { configuration.accessControl }

    /// The tracer requests' spans go to: the one bootstrapped when the
    /// server was made (`InstrumentationSystem.bootstrap` comes first, as
    /// at any program's start), looked up once rather than for every
    /// request (a lock and a cast each time).
    let tracer: any Tracer

    init(coordinator: Coordinator, configuration: ServerConfiguration, logger: Logger) {
        self.coordinator = coordinator
        tracer = InstrumentationSystem.tracer
        self.model = coordinator.model
        entityHasFetchedProperties = Dictionary(coordinator.model.entities.map { ($0.name, !coordinator.model.fetchedProperties(of: $0.name).isEmpty) },
                                                uniquingKeysWith: { first, _ in first })
        self.configuration = configuration
        self.logger = logger
        authenticator = configuration.authenticator
            ?? configuration.authToken.map { Authenticator(Authenticator.Sources(adminToken: $0)) }
        var exposed = configuration
        exposed.allowsInsecureNetwork = false
        warnings = configuration.allowsInsecureNetwork ? StrataServer.networkRefusal(exposed).map { _ in
            ["serving \(configuration.host) without TLS and authentication (--insecure): anyone who reaches the port can read and change every object"]
        } ?? [] : []
        let model = coordinator.model
        let serverID = self.serverID
        helloResponse = Strata_V1_HelloResponse.with {
            $0.version = WireProtocol.version
            $0.serverID = serverID
            $0.serverName = configuration.serverName
            $0.serverVersion = StrataVersion.software
            $0.modelName = model.name
            $0.entityVersionHashes = model.entityVersionHashes.mapValues { Data($0) }
            $0.modelVersionHash = Data(model.modelVersionHash)
            $0.maxFrameBytes = UInt32(clamping: configuration.maxFrameBytes)
            $0.maxRequestsInFlight = UInt32(clamping: configuration.maxRequestsInFlight)
            $0.idleTimeoutSeconds = configuration.idleTimeout.map { timeout in
                // Rounded up, so a sub-second timeout does not read as "never".
                UInt32(clamping: timeout.components.seconds + (timeout.components.attoseconds > 0 ? 1 : 0))
            } ?? 0
        }
        modelResponse = ModelDescriber.describe(model, stores: coordinator.stores)
        permanentIDs = PermanentIDReader(storeIdentifiers: coordinator.stores.map(\.identifier))
        savesWithoutTasks = coordinator.stores.allSatisfy { $0 is any CompletionSavingStore }
        // Every spelling a store may use in its messages: as given,
        // standardized (the binary store's), and with links resolved.
        // (Only file stores: a database URL's path is its database name.)
        redactor = PathRedactor(paths: coordinator.stores.filter { $0.storeDescription.url?.isFileURL == true }.compactMap(\.storeDescription.url).flatMap { url in
            [url.path, url.standardizedFileURL.path, url.resolvingSymlinksInPath().path]
        })
    }

    /// Each event loop's batch of saves handed back by a store's writer.
    private let completionBatches = PerEventLoop { EventLoopCompletionBatch(eventLoop: $0) }

    /// The coordinator's model.
    let model: ObjectModel
    /// The model's entities, each with whether it has fetched properties
    /// (its own or inherited): what the event loop's handlers check of an
    /// entity on every request, without copying the model.
    let entityHasFetchedProperties: [String: Bool]
    /// Reads the permanent IDs of this server's stores (a get's IDs).
    let permanentIDs: PermanentIDReader

    /// The batch that brings saves back to `eventLoop` (one per loop,
    /// made the first time a connection of that loop asks).
    func completionBatch(on eventLoop: any EventLoop) -> EventLoopCompletionBatch {
        completionBatches.value(on: eventLoop)
    }

    /// Answers a hello and says who it speaks for, or throws the status
    /// that refuses it. `certificateSubject` is the subject of the client's
    /// verified TLS certificate, if it presented one.
    func hello(_ request: Strata_V1_HelloRequest, certificateSubject: String? = nil) async throws -> (Strata_V1_HelloResponse, Identity) {
        guard request.hasVersion else {
            throw WireError(.invalidArgument, "hello without a protocol version")
        }
        guard request.version.major == WireProtocol.version.major else {
            throw WireError(.failedPrecondition, "protocol version \(request.version.major).\(request.version.minor) is not supported: this server speaks \(WireProtocol.version.major).x")
        }
        let identity = try await authenticate(request.authToken, certificateSubject: certificateSubject)
        var response = helloResponse
        response.compression = request.acceptCompression
        return (response, identity)
    }

    /// The identity a hello's token proves (a token, when sent, decides
    /// even with a client certificate), else the certificate's subject.
    private func authenticate(_ token: String, certificateSubject: String?) async throws -> Identity {
        guard let authenticator else {
            // A certificate proves a subject, not a role: roles come from
            // an auth file. (Without rules, no role is needed.)
            return certificateSubject.map { Identity(subject: $0) } ?? .anonymous
        }
        if token.isEmpty {
            if let certificateSubject { return authenticator.identity(forCertificateSubject: certificateSubject) }
            throw WireError(.unauthenticated, "this server requires an auth token")
        }
        guard let identity = await authenticator.identity(forToken: token) else {
            throw WireError(.unauthenticated, "the auth token is not valid")
        }
        return identity
    }

    /// The figures, with the stores' sizes on disk.
    func statsResponse() -> Strata_V1_StatsResponse {
        var response = stats.snapshot()
        response.serverID = serverID
        response.warnings = warnings
        response.serverVersion = StrataVersion.software
        response.stores = coordinator.stores.map { store in
            let description = store.storeDescription
            return Strata_V1_StoreStats.with {
                $0.storeID = store.identifier
                $0.configuration = description.configuration ?? ""
                $0.type = description.type.rawValue
                $0.path = redactor.displayPath(description.url?.path ?? "")
                $0.readOnly = description.isReadOnly
                if let path = description.url?.path {
                    $0.sizeBytes = ["", "-wal", "-shm"].reduce(0) { total, suffix in
                        let size = (try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? NSNumber)?.uint64Value ?? 0
                        return total + size
                    }
                }
            }
        }
        return response
    }

    /// A new context for one request, reading and writing only what
    /// `policy` (the caller's access rules) allows.
    func makeContext(clientName: String, mergePolicy: MergePolicy = .error, author: String? = nil, policy: AccessPolicy? = nil) -> Context {
        Context(coordinator: coordinator, name: clientName, mergePolicy: mergePolicy, transactionAuthor: author ?? clientName,
                saveGuards: policy?.saveGuards, readRestriction: policy?.readRestriction)
    }

    /// The access rules as they bind `identity`; nil when no rules are in
    /// force or the identity is `admin`.
    func policy(for identity: Identity?) -> AccessPolicy? {
        guard let accessControl, let identity else { return nil }
        return accessControl.policy(for: identity, resolver: coordinator.resolver)
    }

    /// The objects among `ids` that `policy` lets its caller read (all of
    /// them without a policy), asked of their stores.
    func readableIDs(_ ids: [ObjectID], policy: AccessPolicy?) async throws -> Set<ObjectID> {
        guard let policy else { return Set(ids) }
        var groups: [String: [ObjectID]] = [:]
        for id in ids where !id.isTemporary { groups["\(id.storeIdentifier) \(id.entityName)", default: []].append(id) }
        var readable: Set<ObjectID> = []
        for group in groups.values {
            guard let first = group.first, let store = coordinator.store(identifier: first.storeIdentifier) else { continue }
            let restriction = try policy.predicate(.read, for: first.entityName)
            if restriction == .constant(false) { continue }
            let selected = QueryPredicate.objects(in: group)
            let fetch = ResolvedFetch(entityName: first.entityName, predicate: restriction == .constant(true) ? selected : .and([selected, restriction]))
            readable.formUnion(try await store.fetchObjectIDs(fetch))
        }
        return readable
    }
}
