import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import StrataContext
import StrataQuery
import StrataStore
import StrataWire

/// The Strata network server: serves a coordinator's model and stores to
/// clients speaking the wire protocol (`Protocol/PROTOCOL.md`).
///
/// Run it as a swift-service-lifecycle `Service` (graceful shutdown on
/// SIGINT/SIGTERM stops accepting, lets running requests finish, then
/// returns), or call ``listen()``, ``run()`` and ``shutdown()`` directly.
/// The server does not close the coordinator's stores: its owner does,
/// after ``run()`` returns.
public actor StrataServer: Service {
    private enum State {
        case idle
        case listening(NIOAsyncChannel<AcceptedConnection, Never>, port: Int)
        case running(any Channel, port: Int)
        case stopped
    }

    /// What the server was configured with.
    public nonisolated let configuration: ServerConfiguration
    private let core: ServerCore
    private let logger: Logger
    private let group: any EventLoopGroup
    private var state: State = .idle
    /// Open connections, so shutdown can stop reading them.
    private let connections = ConnectionRegistry()

    /// Creates a server over a coordinator.
    public init(
        coordinator: Coordinator,
        configuration: ServerConfiguration = ServerConfiguration(),
        logger: Logger = Logger(label: "strata.server"),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.configuration = configuration
        self.logger = logger
        self.core = ServerCore(coordinator: coordinator, configuration: configuration, logger: logger)
        self.group = eventLoopGroup
    }

    /// The server's identity as the hello reports it.
    public nonisolated var serverID: String { core.serverID }

    /// Binds the listening socket and returns the port (useful with port 0).
    @discardableResult
    public func listen() async throws -> Int {
        switch state {
        case .listening(_, let port), .running(_, let port):
            return port
        case .stopped:
            throw StrataServerError.stopped
        case .idle:
            break
        }
        // Checked before binding: an unprotected port is never open, even briefly.
        if let refusal = Self.networkRefusal(configuration) {
            throw StrataServerError.insecureNetwork(refusal)
        }
        // Copies a server left behind when it stopped mid-backup.
        ServerCore.removeStaleBackups(of: core.coordinator.stores)
        if configuration.accessControl != nil, configuration.authenticator == nil, configuration.authToken == nil,
           configuration.tls?.requiresClientCertificates != true {
            throw StrataServerError.misconfigured("access rules need a way to authenticate clients (a token, an auth file, JWT keys or client certificates)")
        }
        let maxFrameBytes = configuration.maxFrameBytes
        let core = self.core
        let tls = configuration.tls
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { [logger] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptErrorLogger(logger: logger))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .bind(host: configuration.host, port: configuration.port) { child in
                child.eventLoop.makeCompletedFuture {
                    if let tls {
                        try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context))
                        if let frameTimeout = core.configuration.frameTimeout {
                            try child.pipeline.syncOperations.addHandler(TLSHandshakeDeadlineHandler(timeout: frameTimeout))
                        }
                    }
                    // Its frame limit is the hello's size until the hello is accepted.
                    let state = ConnectionState(eventLoop: child.eventLoop, maxRequestsInFlight: core.configuration.maxRequestsInFlight, maxFrameBytes: maxFrameBytes)
                    try child.pipeline.syncOperations.addHandler(FrameDecodingHandler(FrameDecoder(limit: state.frameLimit),
                                                                                      observer: core.configuration.frameTimeout.map { FrameDeadline(timeout: $0) }))
                    var saveLogger = core.logger
                    saveLogger[metadataKey: "peer"] = "\(child.remoteAddress?.description ?? "?")"
                    let batch = core.completionBatch(on: child.eventLoop)
                    try child.pipeline.syncOperations.addHandler(EventLoopRequestHandler(
                        gets: CachedGetHandler(core: core, state: state, maxFrameBytes: maxFrameBytes),
                        fetches: FetchHandler(core: core, state: state, plans: core.fetchPlans.value(on: child.eventLoop), maxFrameBytes: maxFrameBytes),
                        saves: SaveHandler(core: core, state: state, maxFrameBytes: maxFrameBytes, logger: saveLogger, batch: batch),
                        state: state, batch: batch))
                    // Every answer is written framed (``ResponseWriter`` and the
                    // handlers above), so no encoder sits in the pipeline.
                    let connection = try NIOAsyncChannel<Frame, ByteBuffer>(
                        wrappingChannelSynchronously: child,
                        configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 16))
                    )
                    return AcceptedConnection(channel: connection, state: state)
                }
            }
        let port = channel.channel.localAddress?.port ?? configuration.port
        state = .listening(channel, port: port)
        return port
    }

    /// Why a server configured so must not serve on its host: an address
    /// other than loopback without TLS and authentication, unless allowed
    /// explicitly (``ServerConfiguration/allowsInsecureNetwork``); nil when
    /// it may. ``listen()`` checks it; a program can check it before it
    /// opens anything.
    public static func networkRefusal(_ configuration: ServerConfiguration) -> String? {
        networkRefusal(configuration, address: try? SocketAddress.makeAddressResolvingHost(configuration.host, port: 0))
    }

    /// Why a server configured so must not serve on `address` (its host
    /// resolved; nil when it does not resolve): an address other than
    /// loopback without TLS and authentication, unless the configuration
    /// allows it explicitly (``ServerConfiguration/allowsInsecureNetwork``).
    static func networkRefusal(_ configuration: ServerConfiguration, address: SocketAddress?) -> String? {
        guard !configuration.allowsInsecureNetwork, !Self.isLoopback(address) else { return nil }
        var missing: [String] = []
        if configuration.tls == nil { missing.append("TLS (a certificate and key)") }
        if configuration.authenticator == nil, configuration.authToken == nil { missing.append("authentication (a token, an auth file or JWT keys)") }
        guard !missing.isEmpty else { return nil }
        return "refusing to listen on \(configuration.host), which is not a loopback address, without \(missing.joined(separator: " and ")); configure them, or allow it explicitly (--insecure)"
    }

    /// Whether `address` is on the loopback interface (127/8 or ::1).
    static func isLoopback(_ address: SocketAddress?) -> Bool {
        switch address {
        case .v4(let v4)?:
            return UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24 == 127
        case .v6(let v6)?:
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            let isOne = bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
            let mappedLoopback = bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
            return isOne || mappedLoopback
        case .unixDomainSocket?:
            return true
        default:
            return false
        }
    }

    /// Serves until ``shutdown()`` or a graceful shutdown of the service
    /// group, then waits for the open connections' running requests.
    public func run() async throws {
        try await listen()
        guard case .listening(let listener, let port) = state else { return }
        state = .running(listener.channel, port: port)
        // Before the "serving" line: a commit by another process after it
        // is announced to this server's subscribers.
        let monitor = await startFollowingOtherProcesses(port: port)
        logger.info("strata-server serving model '\(core.model.name)' on \(configuration.host):\(port) (\(core.coordinator.stores.map { "\($0.configurationName ?? "default")=\($0.storeDescription.type.rawValue)" }.joined(separator: ", ")))")
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { tasks in
                try await listener.executeThenClose { inbound in
                    for try await connection in inbound {
                        tasks.addTask { await self.serve(connection) }
                    }
                }
            }
        } onGracefulShutdown: {
            Task { await self.shutdown() }
        }
        await monitor?.stop()
        state = .stopped
        logger.info("strata-server stopped")
    }

    /// Records the figures that are read rather than counted into
    /// swift-metrics gauges: open subscriptions and connections, requests in
    /// flight, row-cache hits, misses and size, store sizes, each SQLite
    /// store's write-ahead log size, and how many history transactions
    /// each consumer of a store has yet to merge. Call before a metrics
    /// backend renders them (`GET /metrics`).
    public nonisolated func recordGauges() async {
        let stats = core.statsResponse()
        Gauge(label: "strata_subscriptions").record(Int(stats.subscriptions))
        Gauge(label: "strata_connections_open").record(Int(stats.connectionsOpen))
        Gauge(label: "strata_requests_in_flight").record(core.stats.requestsInFlight)
        let cache = core.coordinator.rowCache.statistics
        Gauge(label: "strata_row_cache_hits").record(Int(clamping: cache.hits))
        Gauge(label: "strata_row_cache_misses").record(Int(clamping: cache.misses))
        Gauge(label: "strata_row_cache_rows").record(cache.count)
        for store in stats.stores {
            Gauge(label: "strata_store_size_bytes", dimensions: [("store", store.configuration.isEmpty ? store.storeID : store.configuration)]).record(Int(clamping: store.sizeBytes))
        }
        for store in core.coordinator.stores {
            let name = store.configurationName ?? "default"
            if store.storeDescription.type == .sqlite, let url = store.storeDescription.url {
                let wal = (try? FileManager.default.attributesOfItem(atPath: url.path + "-wal"))?[.size] as? NSNumber
                Gauge(label: "strata_wal_size_bytes", dimensions: [("store", name)]).record(wal?.intValue ?? 0)
            }
            guard let history = store as? any HistoryTrackingStore, let current = try? await history.currentHistoryToken(),
                  let consumers = try? await history.consumers() else { continue }
            // Consumer names come from clients too: the 100 most recently
            // heard from, so that the series stay bounded.
            for consumer in consumers.sorted(by: { $0.updated > $1.updated }).prefix(100) {
                Gauge(label: "strata_history_backlog", dimensions: [("store", name), ("consumer", consumer.name)])
                    .record(max(0, current.value - consumer.token.value))
            }
        }
    }

    /// nil when the server serves and every store answers (and, unless
    /// configured read-only, may be written); otherwise why not. For
    /// `GET /ready` of the ``AdminServer``.
    public func readiness() async -> String? {
        guard case .running = state else { return "the server is not serving" }
        for store in core.coordinator.stores {
            let name = store.storeDescription.displayName
            // The smallest read: a count of no more than one object, within
            // a deadline (a database server that stopped answering must
            // not hang the probe).
            if let entity = store.entityNames.min() {
                var probe = ResolvedFetch(entityName: entity, predicate: .constant(true))
                probe.limit = 1
                let fetch = probe
                let outcome = await Self.answerWithin(Self.readinessDeadline) { () async -> String? in
                    do {
                        _ = try await store.count(fetch)
                        return nil
                    } catch {
                        return "\(error)"
                    }
                } late: {
                    "no answer within \(Self.readinessDeadline)"
                }
                if let outcome {
                    return "store \(core.redactor.redact(name)) does not answer: \(core.redactor.redact(outcome))"
                }
            }
            let isFile = store.storeDescription.type == .sqlite || store.storeDescription.type == .binary
            if isFile, !store.isReadOnly, let url = store.storeDescription.url,
               !FileManager.default.isWritableFile(atPath: url.path) || !FileManager.default.isWritableFile(atPath: url.deletingLastPathComponent().path) {
                return "store \(core.redactor.redact(name)) cannot be written"
            }
        }
        return nil
    }

    /// How long ``readiness()`` waits for each store's answer.
    static let readinessDeadline: Duration = .seconds(2)

    /// `body`'s answer, or `late()`'s once `deadline` has passed, without
    /// waiting for `body` to finish (a query stuck behind a database lock
    /// may not end when its task is cancelled).
    static func answerWithin<T: Sendable>(_ deadline: Duration, _ body: @escaping @Sendable () async -> T, late: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let answered = NIOLockedValueBox(false)
            let work = Task {
                let value = await body()
                if answered.withLockedValue({ done in defer { done = true }; return !done }) { continuation.resume(returning: value) }
            }
            Task {
                try? await Task.sleep(for: deadline)
                if answered.withLockedValue({ done in defer { done = true }; return !done }) {
                    continuation.resume(returning: late())
                    work.cancel()
                }
            }
        }
    }

    /// Follows other processes' saves to the stores (see
    /// ``ServerConfiguration/otherProcesses``), logging failures.
    private func startFollowingOtherProcesses(port: Int) async -> ExternalChangeMonitor? {
        guard var options = configuration.otherProcesses else { return nil }
        if options.consumerName == nil {
            options.consumerName = "\(configuration.serverName)@\(configuration.host):\(port)"
        }
        let logger = self.logger
        let report = options.onError
        options.onError = { store, error in
            logger.warning("following other processes' saves failed; restarting", metadata: ["store": "\(store)", "error": "\(error)"])
            report?(store, error)
        }
        return await ExternalChangeMonitor.start(coordinator: core.coordinator, options: options)
    }

    /// Stops accepting, stops reading open connections (their running
    /// requests finish and are answered), and closes whatever is still open
    /// after the grace period.
    public func shutdown() async {
        guard case .running(let listener, _) = state else {
            if case .listening(let listener, _) = state {
                try? await listener.channel.close()
                state = .stopped
            }
            return
        }
        logger.info("strata-server shutting down")
        try? await listener.close()
        for channel in connections.all {
            channel.close(mode: .input, promise: nil)
        }
        let grace = configuration.shutdownGracePeriod
        let connections = self.connections
        Task {
            try? await Task.sleep(for: grace)
            for channel in connections.all {
                channel.close(promise: nil)
            }
        }
    }

    private func serve(_ accepted: AcceptedConnection) async {
        let connection = accepted.channel
        let channel = connection.channel
        let key = ObjectIdentifier(channel)
        let stats = core.stats
        var logger = self.logger
        logger[metadataKey: "peer"] = "\(channel.remoteAddress?.description ?? "?")"
        guard stats.openConnection(limit: configuration.maxConnections) else {
            logger.info("refusing connection: \(configuration.maxConnections) connections open")
            try? await connection.executeThenClose { _, outbound in
                let writer = ResponseWriter(outbound: outbound, maxFrameBytes: core.configuration.maxFrameBytes)
                try await writer.send(requestID: 0, status: WireError(.resourceExhausted, "the server has its maximum of \(configuration.maxConnections) connections open").status)
            }
            return
        }
        connections.add(channel, key: key)
        await ServerConnection(core: core, channel: connection, state: accepted.state, logger: logger).run()
        connections.remove(key)
        stats.closeConnection()
    }
}

/// Misuse of a ``StrataServer``'s lifecycle.
public enum StrataServerError: Error, Sendable, CustomStringConvertible {
    /// The server has stopped and cannot be started again.
    case stopped
    /// The configuration would serve a network without TLS and
    /// authentication; the message says what is missing.
    case insecureNetwork(String)
    /// The configuration contradicts itself; the message says how.
    case misconfigured(String)

    /// What went wrong.
    public var description: String {
        switch self {
        case .stopped: "the server has stopped and cannot be started again"
        case .insecureNetwork(let message), .misconfigured(let message): message
        }
    }
}

/// The open connections of a server, so shutdown can reach them.
private final class ConnectionRegistry: Sendable {
    private let channels = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel, key: ObjectIdentifier) {
        channels.withLockedValue { $0[key] = channel }
    }

    func remove(_ key: ObjectIdentifier) {
        channels.withLockedValue { _ = $0.removeValue(forKey: key) }
    }

    var all: [any Channel] { channels.withLockedValue { Array($0.values) } }
}
