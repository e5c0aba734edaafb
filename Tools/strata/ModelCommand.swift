import ArgumentParser
import StrataWire

/// `strata model [--json]`: the model the server serves; `strata model
/// inspect|validate PATH` read Xcode model files offline.
struct ModelCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Print the served model, or inspect and validate Xcode data models offline.",
        discussion: """
            Without a subcommand: the server's model (entities, attributes, relationships, \
            fetched properties, configurations and the store serving each).
            """,
        subcommands: [ModelInspectCommand.self, ModelValidateCommand.self]
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Flag(help: "Print JSON.")
    var json = false

    func execute(in session: Session) async throws {
        let model = try await session.model().response
        if json {
            Console.line(ServedModelPrinter.json(model).rendered())
        } else {
            Console.output(ServedModelPrinter.text(model, style: session.style))
        }
    }
}
