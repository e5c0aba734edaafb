import ArgumentParser

/// `strata auth …`: helpers for the server's identities.
struct AuthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth",
        abstract: "Prepare identities for a server's auth file.",
        subcommands: [AuthHashTokenCommand.self]
    )
}
