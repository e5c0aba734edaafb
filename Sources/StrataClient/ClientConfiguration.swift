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
    /// Send ``authToken`` over plain TCP to a host other than loopback
    /// (refused otherwise: anyone on the way could read it).
    public var allowsPlaintextToken: Bool

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
        tls: ClientTLS? = nil,
        allowsPlaintextToken: Bool = false
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
        self.allowsPlaintextToken = allowsPlaintextToken
    }

    /// Why the token must not be sent (it would cross a network in
    /// clear), or nil.
    public var plaintextTokenRefusal: String? {
        guard let authToken, !authToken.isEmpty, tls == nil, !allowsPlaintextToken, !Self.isLoopback(host) else { return nil }
        return "refusing to send the auth token in clear to \(host): connect with TLS (--tls, --tls-ca), or allow it explicitly (--insecure)"
    }

    /// Whether `host` names this machine: `localhost`, 127/8 or ::1
    /// (other names are not resolved here: they count as remote).
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
