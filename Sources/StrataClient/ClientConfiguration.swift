import NIOCore
import NIOPosix
import StrataWire

/// Where a ``StrataClient`` connects and how it introduces itself.
public struct ClientConfiguration: Sendable {
    /// Server host name or address.
    public var host: String
    /// Server port.
    public var port: Int
    /// The name the server logs and reports as the origin of this client's saves.
    public var clientName: String
    /// The token, when the server requires one.
    public var authToken: String?
    /// Ask the server to compress large frames.
    public var acceptCompression: Bool
    /// Compress large request frames.
    public var compressRequests: Bool
    /// How long connecting may take.
    public var connectTimeout: Duration
    /// The largest frame accepted from the server.
    public var maxFrameBytes: Int
    /// The event loops the connection runs on.
    public var eventLoopGroup: any EventLoopGroup
    /// TLS to the server; nil connects over plain TCP.
    public var tls: ClientTLS?

    /// Creates a configuration (defaults: 127.0.0.1:7420).
    public init(
        host: String = "127.0.0.1",
        port: Int = WireProtocol.defaultPort,
        clientName: String = "strata-client",
        authToken: String? = nil,
        acceptCompression: Bool = false,
        compressRequests: Bool = false,
        connectTimeout: Duration = .seconds(5),
        maxFrameBytes: Int = WireProtocol.defaultMaxFrameBytes,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        tls: ClientTLS? = nil
    ) {
        self.host = host
        self.port = port
        self.clientName = clientName
        self.authToken = authToken
        self.acceptCompression = acceptCompression
        self.compressRequests = compressRequests
        self.connectTimeout = connectTimeout
        self.maxFrameBytes = maxFrameBytes
        self.eventLoopGroup = eventLoopGroup
        self.tls = tls
    }
}
