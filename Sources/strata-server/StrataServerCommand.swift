import ArgumentParser
import Foundation
import Logging
import Metrics
import NIOPosix
import Prometheus
import ServiceLifecycle
import StrataAuth
import StrataContext
import StrataModel
import StrataPostgres
import StrataSamples
import StrataServer
import StrataStore
import StrataSQLite
import StrataWire
import UnixSignals

/// `strata-server`: serves a model and its stores over the Strata wire protocol.
@main
struct StrataServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-server",
        abstract: "Serve a Strata model and its stores over TCP.",
        usage: """
            strata-server [<options>]
              strata-server restore <backup> --to <store-file>
            """,
        discussion: """
        With no --model, serves the bundled Books & Feedback sample from two \
        SQLite stores (Books.sqlite, Feedback.sqlite) under --data-dir.

        Every option can also come from the environment: STRATA_SERVER_ and the \
        option's name in capitals, e.g. STRATA_SERVER_DATA_DIR, STRATA_SERVER_PORT, \
        STRATA_SERVER_EMPTY=1; STRATA_SERVER_STORE takes several values separated by ';'. \
        The admin token: STRATA_AUTH_TOKEN. The command line wins.
        """,
        version: StrataVersion.description,
        subcommands: [RestoreCommand.self]
    )

    @Option(help: "An Xcode model (.xcdatamodeld, .xcdatamodel or its contents file).")
    var model: String?

    @Option(name: .customLong("store"), help: "CONFIG=TYPE:PATH[?readonly], TYPE one of sqlite, memory, binary (repeatable; PATH relative to --data-dir); or CONFIG=postgres:postgresql://USER@HOST[:PORT]/DB[?schema=NAME&pool=N&sslmode=MODE&sslrootcert=FILE&passfile=FILE] (postgres+readonly: for read-only; the password from PGPASSWORD or the passfile, a file holding only the password). Default: one SQLite store per configuration.")
    var stores: [StoreOption] = []

    @Option(help: "Directory for store files.")
    var dataDir: String = "strata-data"

    @Flag(help: "Start the bundled sample's new stores empty, without its dozen books and their feedback.")
    var empty = false

    @Option(help: "Address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port: Int = 7420

    @Option(help: "Port of the operators' HTTP endpoint (GET /health, /ready, /metrics); 0 picks a free one; off without it.")
    var adminPort: Int?

    @Option(help: "Address of the operators' HTTP endpoint.")
    var adminHost: String = "127.0.0.1"

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(help: "text, or json (one JSON object per line).")
    var logFormat: String = "text"

    @Option(help: "Connections served at once.")
    var maxConnections: Int = 10_000

    @Option(help: "Subscriptions one connection may hold at once.")
    var maxSubscriptions: Int = 1000

    @Option(help: "Largest frame payload accepted, compressed and inflated (bytes).")
    var maxFrameBytes: Int = 16 * 1024 * 1024

    @Option(help: "Seconds before an idle connection (no traffic, no request, no subscription) is closed; 0 never.")
    var idleTimeout: Int = 300

    @Option(help: "Seconds a frame may take to arrive once its first byte has (plus one per MiB of payload); a slower one closes the connection; 0 never.")
    var frameTimeout: Int = 30

    @Option(help: "Snapshots kept in the coordinator's row cache for reads by object ID (0 turns it off).")
    var rowCache: Int = 100_000

    @OptionGroup(title: "Security")
    var security: SecurityOptions

    @Flag(help: "Do not record persistent history in new SQLite store files (only for a store no other process opens; a file that already records history keeps recording). Implies --history-poll 0.")
    var noHistory = false

    @Option(help: "Milliseconds between checks for other processes' saves to the SQLite stores (persistent history) while they save; checks that find none back off to 100 ms (or this, if longer). 0 ignores other processes.")
    var historyPoll: Int = 10

    @Option(help: "Name under which this server records how far it has merged history (default <server>@<host>:<port>); give each server on a data directory its own.")
    var historyConsumer: String?

    @Option(help: "Hours after which history no live consumer needs is purged; consumers silent that long stop holding it back.")
    var historyRetention: Int = 168

    @Option(help: "Seconds between history purges; 0 never purges.")
    var historyPurgeInterval: Int = 60

    @Option(help: "Page cache of each SQLite connection, in MiB (0: SQLite's default, 2 MB).")
    var sqliteCacheMb: Int = StoreDescription.defaultPageCacheBytes / (1024 * 1024)

    @Option(help: "Size, in MiB, a SQLite store's write-ahead log reaches before it is copied into the file.")
    var walCheckpointMb: Int = StoreDescription.defaultWALCheckpointBytes / (1024 * 1024)

    @Option(help: "Page size, in bytes, of SQLite stores this server creates (a power of two from 512 to 65536; SQLite's 4096 by default). Stores that exist keep theirs.")
    var pageSize: Int?

    @Option(help: "Threads serving connections (NIO event loops); 0: one per core.")
    var eventLoopThreads: Int = 0

    @Option(help: "Milliseconds a SQLite store waits (and retries with backoff) for another connection's or process's lock before answering 134090.")
    var busyTimeout: Int = 5_000

    /// Parses the command line after the options the environment gives
    /// (``EnvironmentOptions``), then runs. Usage errors exit 1, as in
    /// `strata` and `strata-bench` (docs/cli.md's table), not
    /// ArgumentParser's 64.
    static func main() async {
        do {
            let arguments = try EnvironmentOptions.arguments(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
            var command = try parseAsRoot(arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code.isSuccess {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(code == .validationFailure ? 1 : code.rawValue)
        }
    }

    /// Ten years of hours: far beyond any retention, far below an overflow.
    static let maximumRetentionHours = 10 * 366 * 24
    /// A day of seconds, the longest interval or timeout the options take.
    static let maximumSeconds = 24 * 3600

    func validate() throws {
        var schemas: [String: String] = [:]
        for store in stores {
            if let problem = store.problem { throw ValidationError("--store \(store.label.isEmpty ? "" : store.label + ": ")\(problem)") }
            // Two configurations in one PostgreSQL schema would each find
            // the other's tables: refused before anything is created.
            if store.type == .postgres, let location = try? PostgresStoreURL(store.path) {
                let key = "\(location.host):\(location.port)/\(location.database)/\(location.schema)"
                if let other = schemas.updateValue(store.configuration, forKey: key) {
                    throw ValidationError("--store \(other) and \(store.configuration) use one PostgreSQL schema (\(location.displayName)): each configuration needs a schema of its own")
                }
            }
        }
        guard logFormat == "text" || logFormat == "json" else { throw ValidationError("--log-format must be text or json") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        if let adminPort, !(0...65535).contains(adminPort) { throw ValidationError("--admin-port must be between 0 and 65535") }
        guard maxConnections > 0 else { throw ValidationError("--max-connections must be positive") }
        guard (1...1_000_000).contains(maxSubscriptions) else { throw ValidationError("--max-subscriptions must be between 1 and 1000000") }
        guard (1024...(1 << 30)).contains(maxFrameBytes) else { throw ValidationError("--max-frame-bytes must be between 1024 and 1073741824 (1 GiB)") }
        guard idleTimeout >= 0 else { throw ValidationError("--idle-timeout must not be negative") }
        guard (0...Self.maximumSeconds).contains(frameTimeout) else { throw ValidationError("--frame-timeout must be between 0 and \(Self.maximumSeconds) seconds") }
        guard rowCache >= 0 else { throw ValidationError("--row-cache must not be negative") }
        guard (0...60_000).contains(historyPoll) else { throw ValidationError("--history-poll must be between 0 and 60000 milliseconds") }
        guard (1...Self.maximumRetentionHours).contains(historyRetention) else {
            throw ValidationError("--history-retention must be between 1 and \(Self.maximumRetentionHours) hours")
        }
        guard (0...Self.maximumSeconds).contains(historyPurgeInterval) else {
            throw ValidationError("--history-purge-interval must be between 0 and \(Self.maximumSeconds) seconds")
        }
        guard (1...Self.maximumSeconds * 1000).contains(busyTimeout) else {
            throw ValidationError("--busy-timeout must be between 1 and \(Self.maximumSeconds * 1000) milliseconds")
        }
        guard (0...1024).contains(eventLoopThreads) else { throw ValidationError("--event-loop-threads must be between 0 and 1024") }
        guard (0...65_536).contains(sqliteCacheMb) else { throw ValidationError("--sqlite-cache-mb must be between 0 and 65536") }
        guard (1...4096).contains(walCheckpointMb) else { throw ValidationError("--wal-checkpoint-mb must be between 1 and 4096") }
        if let pageSize, !StoreDescription.pageSizes.contains(pageSize) {
            throw ValidationError("--page-size must be a power of two from 512 to 65536")
        }
        guard idleTimeout <= Self.maximumSeconds else { throw ValidationError("--idle-timeout must be at most \(Self.maximumSeconds) seconds") }
    }

    func run() async throws {
        // Data files and folders the server creates (stores, their logs,
        // the data directory) are its owner's only, as PostgreSQL's are.
        umask(0o077)
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let json = logFormat == "json"
        LoggingSystem.bootstrap { label in
            if json {
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "strata.server")
        logger.info("strata-server \(StrataVersion.description)")
        // swift-metrics into Prometheus's registry, rendered by GET /metrics.
        var metrics = PrometheusMetricsFactory()
        // Saves per group commit: one to a few hundred.
        metrics.valueHistogramBuckets["strata_commit_group_size"] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        if adminPort != nil { MetricsSystem.bootstrap(metrics) }
        // Security first: a server that would start unprotected by mistake
        // must not have opened (and perhaps migrated) anything yet.
        let tls: ServerTLS?
        let authentication: Authenticator.Sources?
        let objectModel: ObjectModel
        let rules: AccessRules?
        do {
            tls = try security.loadTLS()
            authentication = try await security.loadAuthentication()
            objectModel = try loadModel()
            rules = try security.loadRules(model: objectModel)
        } catch let error as StrataError {
            logger.critical("cannot load the model: error \(error.code.rawValue): \(error.message)\(error.details.map { "\n  " + $0 }.joined())")
            throw ExitCode.failure
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode.failure
        }
        if rules != nil, authentication == nil, tls?.requiresClientCertificates != true {
            logger.critical("cannot start: --rules needs a way to authenticate clients (--auth-token, --auth-token-file, --auth-file, --jwt-key or --tls-client-ca)")
            throw ExitCode.failure
        }
        let accessControl = rules.map { AccessControl($0) }
        // The singleton has one loop per core; a chosen count gets its own group.
        // Connections are descriptors: never promise more than the process
        // can open, or new clients hang in the backlog instead of being refused.
        var connectionLimit = maxConnections
        if let descriptors = FileDescriptorLimit.raise() {
            let holdable = FileDescriptorLimit.connections(forLimit: descriptors)
            if holdable < maxConnections {
                connectionLimit = holdable
                logger.warning("serving at most \(holdable) connections, not \(maxConnections): the process may open \(descriptors) file descriptors (raise its limit, e.g. ulimit -n, for more)")
            } else {
                logger.info("file descriptors: \(descriptors); connections: at most \(maxConnections)")
            }
        }
        let authenticator = authentication.map { Authenticator($0) }
        let configuration = ServerConfiguration(
                host: host,
                port: port,
                maxConnections: connectionLimit,
                maxFrameBytes: maxFrameBytes,
                idleTimeout: idleTimeout == 0 ? nil : .seconds(idleTimeout),
                frameTimeout: frameTimeout == 0 ? nil : .seconds(frameTimeout),
                authenticator: authenticator,
                tls: tls,
                accessControl: accessControl,
                allowsInsecureNetwork: security.insecure,
                maxSubscriptionsPerConnection: maxSubscriptions,
                otherProcesses: historyPoll == 0 || noHistory ? nil : ExternalChangeMonitor.Options(
                    pollInterval: .milliseconds(historyPoll),
                    consumerName: historyConsumer,
                    purgeInterval: historyPurgeInterval == 0 ? nil : .seconds(historyPurgeInterval),
                    retention: .seconds(historyRetention * 3600)
                )
            )
        if let refusal = StrataServer.networkRefusal(configuration) {
            logger.critical("cannot start: \(refusal)")
            throw ExitCode.failure
        }
        // The bundled sample's stores, new: seeded once they are open.
        let seedsSample = model == nil && stores.isEmpty && !empty
            && !FileManager.default.fileExists(atPath: URL(fileURLWithPath: dataDir, isDirectory: true).appendingPathComponent("Books.sqlite").path)
        let container: PersistentContainer
        do {
            container = try await openContainer(objectModel)
        } catch let error as StrataError {
            logger.critical("cannot open the stores: error \(error.code.rawValue): \(error.message)\(error.details.map { "\n  " + $0 }.joined())")
            throw ExitCode.failure
        }
        if seedsSample {
            do {
                if try await BooksSample.seed(Context(coordinator: container.coordinator, name: "sample", transactionAuthor: "sample")) {
                    logger.info("new sample stores: wrote a dozen books and their feedback (--empty skips this)")
                }
            } catch {
                logger.warning("the sample could not be seeded: \(error)")
            }
        }
        let eventLoops = eventLoopThreads == 0 ? nil : MultiThreadedEventLoopGroup(numberOfThreads: eventLoopThreads)
        let server = StrataServer(
            coordinator: container.coordinator,
            configuration: configuration,
            logger: logger,
            eventLoopGroup: eventLoops ?? MultiThreadedEventLoopGroup.singleton
        )
        do {
            try await server.listen()
        } catch let error as StrataServerError {
            logger.critical("cannot start: \(error)")
            try? await container.close()
            throw ExitCode.failure
        }
        logger.info("transport: \(tls.map { "TLS 1.2+\($0.requiresClientCertificates ? ", client certificates required" : "")" } ?? "plain TCP"); authentication: \(security.describeAuthentication(authentication, tls: tls)); access rules: \(rules.map { _ in "from \(security.rules ?? "")" } ?? (authentication == nil && tls?.requiresClientCertificates != true ? "none" : "none, authenticated clients may do everything"))")
        if let expiry = tls?.certificateExpiry { logger.info("TLS certificate valid until \(expiry)") }
        if security.insecure, StrataServer.networkRefusal({ var c = configuration; c.allowsInsecureNetwork = false; return c }()) != nil {
            logger.warning("--insecure: serving \(host) without TLS and authentication: anyone who reaches the port can read and change every object")
        }
        var admin: AdminServer?
        if let adminPort {
            let endpoint = AdminServer(host: adminHost, port: adminPort, endpoints: AdminServer.Endpoints(
                metrics: { [registry = metrics.registry] in
                    await server.recordGauges()
                    return registry.emitToString()
                },
                readiness: { await server.readiness() }
            ), logger: logger)
            do {
                let port = try await endpoint.start()
                logger.info("admin endpoint http://\(adminHost):\(port) (/health, /ready, /metrics)")
                admin = endpoint
            } catch {
                logger.critical("cannot start the admin endpoint on \(adminHost):\(adminPort): \(error)")
                try? await container.close()
                throw ExitCode.failure
            }
        }
        let reloader = Task { await reloadOnHangUp(tls: tls, authenticator: authenticator, accessControl: accessControl, model: objectModel, logger: logger) }
        defer { reloader.cancel() }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: server, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        do {
            try await group.run()
            await admin?.stop()
        } catch {
            await admin?.stop()
            logger.error("server stopped with an error: \(error)")
            try? await container.close()
            try? await eventLoops?.shutdownGracefully()
            throw ExitCode.failure
        }
        try? await eventLoops?.shutdownGracefully()
        try await container.close()
        logger.info("stores closed")
    }

    /// Reads the TLS files, auth file and JWT keys again on each SIGHUP; a
    /// file that fails to load keeps the old configuration and is logged.
    private func reloadOnHangUp(tls: ServerTLS?, authenticator: Authenticator?, accessControl: AccessControl?, model: ObjectModel, logger: Logger) async {
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            do {
                try tls?.reload()
                if let expiry = tls?.certificateExpiry { logger.info("reloaded TLS files; certificate valid until \(expiry)") }
            } catch {
                logger.error("SIGHUP: keeping the TLS files loaded before: \(error)")
            }
            if let accessControl {
                do {
                    if let rules = try security.loadRules(model: model) {
                        accessControl.replace(rules)
                        logger.info("reloaded access rules from \(security.rules ?? "")")
                    }
                } catch {
                    logger.error("SIGHUP: keeping the access rules loaded before: \(error)")
                }
            }
            guard let authenticator else { continue }
            do {
                if let sources = try await security.loadAuthentication() {
                    authenticator.replace(sources)
                    logger.info("reloaded authentication: \(security.describeAuthentication(sources, tls: tls))")
                }
            } catch {
                logger.error("SIGHUP: keeping the authentication loaded before: \(error)")
            }
        }
    }

    /// `description` recording history unless `--no-history`, with the
    /// busy timeout, page cache, checkpoint size and page size of the options.
    private func withStoreOptions(_ description: StoreDescription) -> StoreDescription {
        var description = description
        description.tracksHistory = !noHistory
        description.busyTimeout = .milliseconds(busyTimeout)
        description.pageCacheBytes = sqliteCacheMb * 1024 * 1024
        description.walCheckpointBytes = walCheckpointMb * 1024 * 1024
        description.pageSize = pageSize
        return description
    }

    /// The model served: `--model`'s, or the bundled sample's.
    private func loadModel() throws -> ObjectModel {
        guard let model else { return BooksSample.model }
        return try XcodeModelLoader.load(contentsOf: URL(fileURLWithPath: model))
    }

    /// The stores the server opens: SQLite, in-memory, binary and PostgreSQL.
    static let storeFactory = StoreFactory.standard.addingPostgres(logger: Logger(label: "strata.postgres"))

    /// Opens the stores of `objectModel`.
    private func openContainer(_ objectModel: ObjectModel) async throws -> PersistentContainer {
        let dataDirectory = URL(fileURLWithPath: dataDir, isDirectory: true)
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        guard model != nil else {
            let descriptions = (stores.isEmpty
                ? BooksSample.sqliteStores(in: dataDirectory)
                : stores.map { $0.description(in: dataDirectory) }).map(withStoreOptions)
            return try await PersistentContainer(
                model: BooksSample.model,
                storeDescriptions: descriptions, factory: Self.storeFactory,
                transformers: BooksSample.transformers,
                transientRules: BooksSample.transientRules,
                rowCacheCapacity: rowCache
            )
        }
        var descriptions = stores.map { $0.description(in: dataDirectory) }
        if descriptions.isEmpty {
            let configurations = objectModel.configurations.map(\.name)
            descriptions = configurations.isEmpty
                ? [StoreDescription(url: dataDirectory.appendingPathComponent("\(objectModel.name.isEmpty ? "Model" : objectModel.name).sqlite"), type: .sqlite)]
                : configurations.map { StoreDescription(url: dataDirectory.appendingPathComponent("\($0).sqlite"), type: .sqlite, configuration: $0) }
        }
        descriptions = descriptions.map(withStoreOptions)
        var transformers = ValueTransformerRegistry()
        for entity in objectModel.entities {
            for attribute in entity.attributes {
                if let name = attribute.valueTransformerName, transformers.transformer(named: name) == nil {
                    transformers.register(PassThroughTransformer(name: name))
                }
            }
        }
        return try await PersistentContainer(model: objectModel, storeDescriptions: descriptions, factory: Self.storeFactory, transformers: transformers, rowCacheCapacity: rowCache)
    }
}
