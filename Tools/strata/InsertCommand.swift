import ArgumentParser
import StrataWire

/// `strata insert ENTITY key=value … [--json]`: inserts one object and
/// prints its permanent ID (or, with `--json`, the object as fetch shows it).
struct InsertCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "insert",
        abstract: "Insert an object and print its new object ID."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Argument(help: "The entity.", completion: EntityCompletion.kind)
    var entity: String

    @Argument(help: ArgumentHelp("Property values, typed by the model ('key=' or 'key=null' for nil).", valueName: "key=value"))
    var assignments: [String] = []

    @Option(help: "The configuration whose store receives the object (when the entity is in several).")
    var configuration: String?

    @Flag(help: "Print the inserted object as JSON.")
    var json = false

    func execute(in session: Session) async throws {
        let model = try await session.model()
        let info = try model.entity(entity)
        if info.isAbstract { throw CLIError.invalid("\(entity) is abstract; insert one of its subentities") }
        if let configuration, !info.configurations.contains(configuration) {
            throw CLIError.invalid("--configuration: \(entity) is not in configuration '\(configuration)' (it is in: \(info.configurations.joined(separator: ", ")))")
        }
        let values = try await session.valueParser().values(assignments, entity: info)
        if var transaction = session.transaction {
            let temporaryID = transaction.insert(entity: entity, configuration: configuration ?? "", values: values)
            session.transaction = transaction
            Console.line(json ? JSONValue.string(temporaryID).rendered() : temporaryID)
            return
        }
        var changes = ChangeSet()
        let temporaryID = changes.insert(entity: entity, configuration: configuration ?? "", values: values)
        let response = try await session.client.save(changes.request)
        guard let id = response.inserted.first(where: { $0.temporaryID == temporaryID })?.id else {
            throw CLIError(status: .invalidInput, code: .internal, strataCode: 0, message: "the server answered the insert without an object ID")
        }
        if json {
            let object = try await session.object(id, fetched: false)
            Console.line(ObjectPresenter(model: model, style: session.style).json(object, fetched: []).rendered())
        } else {
            Console.line(id)
        }
    }
}
