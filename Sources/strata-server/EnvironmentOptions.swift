import ArgumentParser

/// Server options from the environment: `--data-dir` from
/// `STRATA_SERVER_DATA_DIR`, `--empty` from `STRATA_SERVER_EMPTY=1`, and so
/// on for every option (the admin token keeps its own `STRATA_AUTH_TOKEN`,
/// which clients read too). The `STRATA_SERVER_` prefix keeps them apart
/// from the variables the clients read (`STRATA_PORT`, `STRATA_TLS_CERT`…),
/// which name the other end of the connection.
///
/// The command line wins: an option given there ignores its variable. An
/// empty variable counts as unset; an unknown `STRATA_SERVER_` variable (a
/// misspelt one) is refused.
enum EnvironmentOptions {
    /// Options that take a value.
    static let options = [
        "model", "store", "data-dir", "host", "port", "admin-port", "admin-host", "log-level", "log-format",
        "max-connections", "max-subscriptions", "max-frame-bytes", "idle-timeout", "frame-timeout", "row-cache",
        "history-poll", "history-consumer", "history-retention", "history-purge-interval", "sqlite-cache-mb",
        "wal-checkpoint-mb", "page-size", "event-loop-threads", "busy-timeout",
        "tls-cert", "tls-key", "tls-client-ca", "auth-token-file", "auth-file", "jwt-key", "jwt-hmac-secret-file",
        "jwt-roles-claim", "jwt-audience", "jwt-issuer", "rules",
    ]
    /// Flags: the variable is a boolean (1, true, yes, on / 0, false, no, off).
    static let flags = ["empty", "no-history", "jwt-accept-no-exp", "insecure"]
    /// The option that may be repeated: its variable holds values separated by `;`.
    static let repeated = "store"
    /// Options with no variable of this kind, and why.
    static let exceptions = ["auth-token": "STRATA_AUTH_TOKEN, shared with the clients"]

    /// The variable that gives `--option`.
    static func variable(for option: String) -> String {
        "STRATA_SERVER_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// `arguments` (without the program name) preceded by the options the
    /// environment gives and the command line does not; unchanged for a
    /// subcommand (`restore`), which takes none of them.
    static func arguments(_ arguments: [String], environment: [String: String]) throws(ValidationError) -> [String] {
        if let first = arguments.first, !first.hasPrefix("-") { return arguments }
        // A misspelt variable would be ignored silently: refuse it.
        let known = Set((options + flags).map(variable(for:)))
        if let unknown = environment.keys.sorted().first(where: { $0.hasPrefix("STRATA_SERVER_") && !known.contains($0) }) {
            throw ValidationError("unknown environment variable \(unknown): the variables are STRATA_SERVER_ and an option's name (see --help)")
        }
        func given(_ option: String) -> Bool {
            arguments.contains { $0 == "--\(option)" || $0.hasPrefix("--\(option)=") }
        }
        // Help and the version need no options (nor their values' checks).
        if arguments.contains(where: { ["--help", "-h", "--version", "--experimental-dump-help"].contains($0) }) { return arguments }
        var added: [String] = []
        for option in options where !given(option) {
            guard let value = environment[variable(for: option)], !value.isEmpty else { continue }
            let values = option == repeated ? value.split(separator: ";").map(String.init).filter { !$0.isEmpty } : [value]
            // `--option=value`: a value starting with '-' stays a value.
            for value in values { added.append("--\(option)=\(value)") }
        }
        for flag in flags where !given(flag) {
            guard let value = environment[variable(for: flag)], !value.isEmpty else { continue }
            switch value.lowercased() {
            case "1", "true", "yes", "on": added.append("--\(flag)")
            case "0", "false", "no", "off": break
            default: throw ValidationError("\(variable(for: flag))=\(value): expected true or false (1/0, yes/no, on/off)")
            }
        }
        return added + arguments
    }
}
