import ArgumentParser
import StrataWire

/// `strata update ID key=value … [--if-version N] [--json]`: changes an
/// object and prints its new version. With `--if-version` the change is
/// based on that version, and a stale one is a conflict (exit 3).
struct UpdateCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Change an object's values and print its new version."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Argument(help: "The object ID.")
    var id: String

    @Argument(help: ArgumentHelp("New values, typed by the model ('key=' or 'key=null' for nil).", valueName: "key=value"))
    var assignments: [String] = []

    @Option(name: .customLong("if-version"), help: ArgumentHelp("Only if the object is still at this version (else exit 3).", valueName: "version"))
    var ifVersion: Int64?

    @Flag(help: "Print the updated object as JSON.")
    var json = false

    func validate() throws {
        if let ifVersion, ifVersion < 1 { throw ValidationError("--if-version must be 1 or more") }
    }

    func execute(in session: Session) async throws {
        let model = try await session.model()
        let info = try model.entity(session.entityName(ofObject: id))
        guard !assignments.isEmpty else { throw CLIError.usage("update needs at least one key=value") }
        let values = try await session.valueParser().values(assignments, entity: info)
        if var transaction = session.transaction {
            transaction.update(id: id, baseVersion: ifVersion ?? 0, values: values)
            session.transaction = transaction
            return
        }
        var changes = ChangeSet()
        changes.update(id: id, baseVersion: ifVersion ?? 0, values: values)
        let response = try await session.client.save(changes.request)
        if json {
            let object = try await session.object(id, fetched: false)
            Console.line(ObjectPresenter(model: model, style: session.style).json(object, fetched: []).rendered())
        } else if let version = response.versions[id] {
            Console.line(String(version))
        } else {
            // Nothing changed in the store (the values were already so).
            Console.line(String(try await session.object(id, fetched: false).version))
        }
    }
}
