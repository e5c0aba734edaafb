import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// The operators' HTTP endpoint (`strata-server --admin-port`), apart from
/// the data port: `GET /health` (the process answers), `GET /ready` (every
/// store usable; 503 with the reason otherwise) and `GET /metrics` (the
/// Prometheus text the owner's ``Endpoints/metrics`` renders).
///
/// Served with NIOHTTP1, already part of the server's SwiftNIO: three
/// fixed GETs do not need a web framework's router, middleware and the
/// minutes its build adds.
public actor AdminServer {
    /// What the endpoints answer.
    public struct Endpoints: Sendable {
        /// The metrics in Prometheus's text format.
        public var metrics: @Sendable () async -> String
        /// nil when ready; otherwise why not.
        public var readiness: @Sendable () async -> String?

        /// Creates the endpoints.
        public init(metrics: @escaping @Sendable () async -> String, readiness: @escaping @Sendable () async -> String?) {
            self.metrics = metrics
            self.readiness = readiness
        }
    }

    private let host: String
    private let port: Int
    private let endpoints: Endpoints
    private let group: any EventLoopGroup
    private let logger: Logger
    private var channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>?
    private var serving: Task<Void, Never>?

    /// An endpoint on `host:port` (0 picks a free port).
    public init(host: String = "127.0.0.1", port: Int, endpoints: Endpoints, logger: Logger,
                eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.host = host
        self.port = port
        self.endpoints = endpoints
        self.logger = logger
        self.group = eventLoopGroup
    }

    /// Binds and starts answering; returns the port.
    public func start() async throws -> Int {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port) { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: child)
                }
            }
        self.channel = channel
        let endpoints = self.endpoints
        let logger = self.logger
        serving = Task {
            try? await withThrowingDiscardingTaskGroup { group in
                try await channel.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask { await Self.serve(connection, endpoints: endpoints, logger: logger) }
                    }
                }
            }
        }
        return channel.channel.localAddress?.port ?? port
    }

    /// Stops accepting and closes the listening socket. Connections a
    /// client keeps open (HTTP keep-alive) are not waited for: they end
    /// with the process.
    public func stop() async {
        try? await channel?.channel.close()
        serving?.cancel()
        serving = nil
        channel = nil
    }

    private static func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, endpoints: Endpoints, logger: Logger) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var request: HTTPRequestHead?
                for try await part in inbound {
                    switch part {
                    case .head(let head):
                        request = head
                    case .body:
                        continue
                    case .end:
                        guard let head = request else { continue }
                        let (status, contentType, body) = await answer(head, endpoints: endpoints)
                        var headers = HTTPHeaders()
                        headers.add(name: "Content-Type", value: contentType)
                        headers.add(name: "Content-Length", value: String(body.utf8.count))
                        try await outbound.write(.head(HTTPResponseHead(version: head.version, status: status, headers: headers)))
                        if head.method != .HEAD {
                            try await outbound.write(.body(.byteBuffer(ByteBuffer(string: body))))
                        }
                        try await outbound.write(.end(nil))
                        request = nil
                    }
                }
            }
        } catch {
            logger.debug("admin connection ended", metadata: ["error": "\(error)"])
        }
    }

    /// Status, content type and body for one request.
    static func answer(_ head: HTTPRequestHead, endpoints: Endpoints) async -> (HTTPResponseStatus, String, String) {
        guard head.method == .GET || head.method == .HEAD else {
            return (.methodNotAllowed, "text/plain; charset=utf-8", "only GET\n")
        }
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        switch path {
        case "/health":
            return (.ok, "text/plain; charset=utf-8", "ok\n")
        case "/ready":
            if let reason = await endpoints.readiness() {
                return (.serviceUnavailable, "text/plain; charset=utf-8", "not ready: \(reason)\n")
            }
            return (.ok, "text/plain; charset=utf-8", "ready\n")
        case "/metrics":
            return (.ok, "text/plain; version=0.0.4; charset=utf-8", await endpoints.metrics())
        default:
            return (.notFound, "text/plain; charset=utf-8", "not found: /health, /ready, /metrics\n")
        }
    }
}
