import ArgumentParser

/// `--host`, `--port`, `--auth-token` and the TLS options, taken by every
/// command that talks to a server after its name;
/// ``ConnectionSettings/extractLeading(_:)`` takes the same options placed
/// before the command name.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Server host (default 127.0.0.1, or $STRATA_HOST).", valueName: "host"))
    var host: String?

    @Option(help: ArgumentHelp("Server port (default 7420, or $STRATA_PORT).", valueName: "port"))
    var port: Int?

    @Option(name: .customLong("auth-token"), help: ArgumentHelp("The token the server expects (or $STRATA_AUTH_TOKEN).", valueName: "token"))
    var authToken: String?

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
        ConnectionSettings(host: host, port: port, authToken: authToken, tls: tls ? true : nil, tlsCA: tlsCA, tlsCertificate: tlsCertificate, tlsKey: tlsKey, insecure: insecure ? true : nil)
    }
}
