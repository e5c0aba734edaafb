import ArgumentParser
import StrataWire

/// `strata model [show] [--json]`: the server's model: entities,
/// attributes, relationships, fetched properties, configurations and the
/// store serving each.
///
/// A subcommand of its own (the default one), so that `--json` after
/// `model inspect PATH` stays inspect's.
struct ModelShowCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the served model (the default): entities, properties, configurations and their stores."
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
