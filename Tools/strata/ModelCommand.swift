import ArgumentParser

/// `strata model …`: commands that read Xcode model files.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Inspect and validate Xcode data models (.xcdatamodeld, .xcdatamodel or contents files).",
        subcommands: [ModelInspectCommand.self, ModelValidateCommand.self]
    )
}
