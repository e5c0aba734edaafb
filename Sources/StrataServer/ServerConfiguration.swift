import StrataAuth
import StrataContext
import StrataWire

/// How a ``StrataServer`` listens and what it allows each connection.
public struct ServerConfiguration: Sendable {
    /// The address to bind (default loopback only).
    public var host: String
    /// The port to bind; 0 picks a free one (see ``StrataServer/listen()``).
    public var port: Int
    /// Connections served at once; more are answered RESOURCE_EXHAUSTED and closed.
    public var maxConnections: Int
    /// The largest frame payload accepted, compressed and inflated.
    public var maxFrameBytes: Int
    /// Close a connection after this long with no frame received, no
    /// request running and no subscription; `nil` never.
    public var idleTimeout: Duration?
    /// How long a frame may take to arrive once its first byte has: a
    /// header or frame still incomplete after this (plus one second per
    /// MiB of its announced payload) closes the connection with
    /// DEADLINE_EXCEEDED, so that a client sending a byte at a time
    /// (slowloris) holds nothing for long; `nil` never.
    public var frameTimeout: Duration?
    /// When set, a client's hello must carry this token, which makes it
    /// `admin` (the simple case of ``authenticator``).
    public var authToken: String?
    /// Who a hello's token or client certificate speaks for. With neither
    /// this nor ``authToken``, every client is ``Identity/anonymous``.
    public var authenticator: Authenticator?
    /// TLS on every connection; nil serves plain TCP.
    public var tls: ServerTLS?
    /// Per-entity access rules; nil lets every authenticated client do
    /// everything. Rules need an authentication method.
    public var accessControl: AccessControl?
    /// Listen on an address other than loopback without TLS and
    /// authentication (``StrataServer/listen()`` refuses otherwise).
    public var allowsInsecureNetwork: Bool
    /// Requests one connection runs at once; the server stops reading a
    /// connection's frames while it has this many in flight.
    public var maxRequestsInFlight: Int
    /// Subscriptions one connection may hold at once; a subscribe beyond
    /// is answered RESOURCE_EXHAUSTED.
    public var maxSubscriptionsPerConnection: Int
    /// How long a graceful shutdown waits for running requests.
    public var shutdownGracePeriod: Duration
    /// The name the hello reports.
    public var serverName: String
    /// How the server follows other processes' saves to its stores
    /// (persistent history: contexts merge them, subscribers are notified);
    /// nil ignores them. Without a consumer name the server records its
    /// position as `<serverName>@<host>:<port>`.
    public var otherProcesses: ExternalChangeMonitor.Options?

    /// Creates a configuration; the defaults serve 127.0.0.1:7420.
    public init(
        host: String = "127.0.0.1",
        port: Int = WireProtocol.defaultPort,
        maxConnections: Int = 10_000,
        maxFrameBytes: Int = WireProtocol.defaultMaxFrameBytes,
        idleTimeout: Duration? = .seconds(300),
        frameTimeout: Duration? = .seconds(30),
        authToken: String? = nil,
        authenticator: Authenticator? = nil,
        tls: ServerTLS? = nil,
        accessControl: AccessControl? = nil,
        allowsInsecureNetwork: Bool = false,
        maxRequestsInFlight: Int = 128,
        maxSubscriptionsPerConnection: Int = 1000,
        shutdownGracePeriod: Duration = .seconds(10),
        serverName: String = "strata-server",
        otherProcesses: ExternalChangeMonitor.Options? = ExternalChangeMonitor.Options()
    ) {
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.maxFrameBytes = maxFrameBytes
        self.idleTimeout = idleTimeout
        self.frameTimeout = frameTimeout
        self.authToken = authToken
        self.authenticator = authenticator
        self.tls = tls
        self.accessControl = accessControl
        self.allowsInsecureNetwork = allowsInsecureNetwork
        self.maxRequestsInFlight = maxRequestsInFlight
        self.maxSubscriptionsPerConnection = maxSubscriptionsPerConnection
        self.shutdownGracePeriod = shutdownGracePeriod
        self.serverName = serverName
        self.otherProcesses = otherProcesses
    }
}
