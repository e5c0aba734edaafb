import ArgumentParser

/// `strata export ENTITY [--where P] [--format ndjson|csv] [--no-header]`:
/// every object of an entity, streamed as the server's batches arrive, in
/// the form `strata import` reads back.
struct ExportCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every object of an entity as ndjson (default) or CSV, streamed; 'strata import' reads it back."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Argument(help: "The entity (objects of its subentities are included).", completion: EntityCompletion.kind)
    var entity: String

    @Option(name: .customLong("where"), help: ArgumentHelp("Only the objects this predicate selects.", valueName: "predicate"))
    var predicate: String?

    @Option(help: "ndjson or csv.")
    var format: ImportCommand.Format = .ndjson

    @Flag(name: .customLong("no-header"), help: "Leave out the CSV header.")
    var noHeader = false

    func execute(in session: Session) async throws {
        var arguments = [entity, "--format", format.rawValue]
        if let predicate { arguments += ["--where", predicate] }
        if noHeader { arguments.append("--no-header") }
        try await FetchCommand.parse(arguments).execute(in: session)
    }
}
