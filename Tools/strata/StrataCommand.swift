import ArgumentParser
import StrataWire

/// `strata`: the Strata command-line client (the process starts in
/// ``StrataMain``, which also accepts the connection options before the command).
struct StrataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Inspect Strata models and talk to a Strata server.",
        discussion: """
            Connection options (--host, --port, --auth-token, --tls, --tls-ca, --tls-cert, --tls-key) \
            go before or after the command; STRATA_HOST, STRATA_PORT, STRATA_AUTH_TOKEN, STRATA_TLS, \
            STRATA_TLS_CA, STRATA_TLS_CERT and STRATA_TLS_KEY are read too (default 127.0.0.1:7420, plain TCP).

            Values are typed by the served model: integers, exact decimals, true/false/yes/no, \
            ISO-8601 dates, UUIDs, URIs, base64 binary, object IDs for to-one relationships, \
            comma-separated IDs for to-many ones; `key=` or `key=null` is nil.

            Exit status: 0 success, 1 invalid input or usage, 2 cannot connect or connection lost, \
            3 conflict (version or uniqueness), 4 not found.
            """,
        version: StrataVersion.description,
        subcommands: [
            PingCommand.self, ModelCommand.self, FetchCommand.self, CountCommand.self,
            InsertCommand.self, UpdateCommand.self, DeleteCommand.self, RefreshCommand.self,
            WatchCommand.self, StatsCommand.self, HistoryCommand.self, ShellCommand.self,
            BackupCommand.self, AuthCommand.self,
        ]
    )
}
