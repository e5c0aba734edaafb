import ArgumentParser

/// `strata model [--json]`: the model the server serves (``ModelShowCommand``,
/// the default); `strata model inspect|validate PATH` read Xcode model files offline.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Print the served model, or inspect and validate Xcode data models offline.",
        subcommands: [ModelShowCommand.self, ModelInspectCommand.self, ModelValidateCommand.self],
        defaultSubcommand: ModelShowCommand.self
    )
}
