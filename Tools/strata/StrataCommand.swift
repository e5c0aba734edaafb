import ArgumentParser

/// `strata`: the Strata command-line client.
@main
struct StrataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Inspect Strata models and talk to a Strata server.",
        subcommands: [ModelCommand.self]
    )
}
