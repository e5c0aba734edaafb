import ArgumentParser

/// `--host`, `--port` and `--auth-token`, taken by every command that talks
/// to a server after its name; ``ConnectionSettings/extractLeading(_:)``
/// takes the same options placed before the command name.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Server host (default 127.0.0.1, or $STRATA_HOST).", valueName: "host"))
    var host: String?

    @Option(help: ArgumentHelp("Server port (default 7420, or $STRATA_PORT).", valueName: "port"))
    var port: Int?

    @Option(name: .customLong("auth-token"), help: ArgumentHelp("The server's auth token (or $STRATA_AUTH_TOKEN).", valueName: "token"))
    var authToken: String?

    /// The options as plain settings.
    var settings: ConnectionSettings {
        ConnectionSettings(host: host, port: port, authToken: authToken)
    }
}
