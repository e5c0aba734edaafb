import ArgumentParser
import StrataWire

/// `strata`: the Strata command-line client (the process starts in
/// ``StrataMain``, which also accepts the connection options before the command).
struct StrataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Inspect Strata models and talk to a Strata server.",
        discussion: """
            The connection options below go before or after the command (strata -h HOST -p PORT ping); \
            STRATA_HOST, STRATA_PORT, STRATA_URL, STRATA_AUTH_TOKEN, STRATA_TIMEOUT, STRATA_TLS, \
            STRATA_TLS_CA, STRATA_TLS_CERT and STRATA_TLS_KEY are read too (default 127.0.0.1:7420, \
            plain TCP). Help is --help (-h is the host, as in psql and redis-cli).

            Values are typed by the served model: integers, exact decimals, true/false/yes/no, \
            ISO-8601 dates, UUIDs, URIs, base64 binary, object IDs for to-one relationships, \
            comma-separated IDs for to-many ones; `key=` or `key=null` is nil.

            Exit status (the same table for strata, strata-bench and strata-server): 0 success, \
            1 invalid input or usage, 2 cannot connect or connection lost, 3 conflict (version or \
            uniqueness), 4 not found, 5 request failed (the server failed it: an internal error, an \
            exhausted resource, an operation it does not have), 6 threshold breached (strata-bench).
            """,
        version: StrataVersion.description,
        subcommands: [
            PingCommand.self, ModelCommand.self, FetchCommand.self, CountCommand.self,
            InsertCommand.self, UpdateCommand.self, DeleteCommand.self, RefreshCommand.self,
            WatchCommand.self, StatsCommand.self, HistoryCommand.self, ShellCommand.self,
            ImportCommand.self, ExportCommand.self, BackupCommand.self, AuthCommand.self,
        ],
        helpNames: [.long]
    )

    /// Parses a command line (after the leading connection options),
    /// first joining `--sort` to a value that starts with '-' (`--sort
    /// -pages` becomes `--sort=-pages`), which the parser would otherwise
    /// read as the short options `-p`…, and splitting psql's `-p7420`
    /// into `-p 7420`.
    static func parse(_ arguments: [String]) throws -> any ParsableCommand {
        var joined: [String] = []
        var index = 0
        while index < arguments.count {
            if arguments[index] == "--sort", index + 1 < arguments.count, arguments[index + 1].hasPrefix("-") {
                joined.append("--sort=" + arguments[index + 1])
                index += 2
            } else {
                joined += splittingAttachedPort(arguments[index])
                index += 1
            }
        }
        return try parseAsRoot(joined)
    }

    /// `-p7420` as `-p 7420` (other arguments as they are).
    static func splittingAttachedPort(_ argument: String) -> [String] {
        guard argument.count > 2, argument.hasPrefix("-p"), argument.dropFirst(2).allSatisfy(\.isNumber) else { return [argument] }
        return ["-p", String(argument.dropFirst(2))]
    }

    /// Listed in `strata --help`; `StrataMain` takes them before the
    /// command name (``ConnectionSettings/extractLeading(_:)``), each
    /// command after it.
    @OptionGroup(title: "Connection") var connection: ConnectionOptions
}
