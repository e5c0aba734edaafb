import ArgumentParser

/// `strata count ENTITY [--where P]`: the number of matching objects, alone.
struct CountCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "count",
        abstract: "Print the number of objects a predicate selects."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Argument(help: "The entity (objects of its subentities are counted).", completion: EntityCompletion.kind)
    var entity: String

    @Option(name: .customLong("where"), help: ArgumentHelp("A predicate in NSPredicate syntax.", valueName: "predicate"))
    var predicate: String?

    @Flag(help: "Print JSON (the number is valid JSON as it is).")
    var json = false

    func execute(in session: Session) async throws {
        _ = try await session.model().entity(entity)
        let count = try await session.client.count(entity, predicate: predicate ?? "")
        Console.line(String(count))
    }
}
