import ArgumentParser

/// The connection options, taken by every command that talks to a server
/// after its name and listed by `strata --help`;
/// ``ConnectionSettings/extractLeading(_:)`` takes the same options placed
/// before the command name, as psql and redis-cli users type them
/// (`strata -h db.example.com -p 7420 ping`).
struct ConnectionOptions: ParsableArguments {
    @Option(name: [.customShort("h"), .long], help: ArgumentHelp("Server host (default 127.0.0.1, or $STRATA_HOST).", valueName: "host"))
    var host: String?

    @Option(name: [.customShort("p"), .long], help: ArgumentHelp("Server port (default 7420, or $STRATA_PORT).", valueName: "port"))
    var port: Int?

    @Option(help: ArgumentHelp("The server as a URL: tcp://HOST:PORT, or tls://HOST:PORT for TLS (or $STRATA_URL).", valueName: "url"))
    var url: String?

    @Option(name: .customLong("auth-token"), help: ArgumentHelp("The token the server expects (or $STRATA_AUTH_TOKEN; --auth-token-file keeps it out of ps).", valueName: "token"))
    var authToken: String?

    @Option(name: .customLong("auth-token-file"), help: ArgumentHelp("A file whose first line is the token.", valueName: "file"))
    var authTokenFile: String?

    @Option(help: ArgumentHelp("Seconds to wait for the TCP connection to be made (default 5, or $STRATA_TIMEOUT).", valueName: "seconds"))
    var timeout: Double?

    @Flag(help: "Connect with TLS, trusting the system's CAs (or $STRATA_TLS=1).")
    var tls = false

    @Option(name: .customLong("tls-ca"), help: ArgumentHelp("Connect with TLS, trusting the CAs of this PEM file (or $STRATA_TLS_CA).", valueName: "file"))
    var tlsCA: String?

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Client certificate (PEM) for a server that requires one (or $STRATA_TLS_CERT).", valueName: "file"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The key of --tls-cert (PEM) (or $STRATA_TLS_KEY).", valueName: "file"))
    var tlsKey: String?

    @Flag(help: "Send the auth token to a host other than loopback without TLS (anyone on the way can read it).")
    var insecure = false

    /// The options as plain settings.
    var settings: ConnectionSettings {
        ConnectionSettings(
            host: host, port: port, url: url, authToken: authToken, authTokenFile: authTokenFile, timeout: timeout,
            tls: tls ? true : nil, tlsCA: tlsCA, tlsCertificate: tlsCertificate, tlsKey: tlsKey, insecure: insecure ? true : nil
        )
    }
}
