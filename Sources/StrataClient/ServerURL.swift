import Foundation

/// A server named as a URL, as the tools take it (`--url`, `STRATA_URL`):
/// `tcp://HOST:PORT` for plain TCP, `tls://HOST:PORT` for TLS (`strata://`
/// names objects, not servers).
public struct ServerURL: Sendable, Hashable {
    /// The host.
    public var host: String
    /// The port, when the URL gives one.
    public var port: Int?
    /// Whether the scheme asks for TLS.
    public var usesTLS: Bool

    /// Parses `tcp://HOST[:PORT]` or `tls://HOST[:PORT]` (an IPv6 host in
    /// brackets); nil for anything else.
    public init?(_ text: String) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), ["tcp", "tls"].contains(scheme),
              let host = components.host, !host.isEmpty, components.path.isEmpty || components.path == "/",
              components.query == nil, components.user == nil else { return nil }
        if let port = components.port, !(1...65_535).contains(port) { return nil }
        // swift-foundation keeps an IPv6 literal's brackets; NIO wants it bare.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = components.port
        self.usesTLS = scheme == "tls"
    }
}
