import ArgumentParser
import StrataWire

/// `strata refresh ID [--json]`: an object's current values and version,
/// with every fetched property and to-many relationship.
struct RefreshCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Print an object's current values, version and fetched properties."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Argument(help: "The object ID.")
    var id: String

    @Flag(help: "Print the object as JSON.")
    var json = false

    func execute(in session: Session) async throws {
        let model = try await session.model()
        let info = try model.entity(Session.entityName(ofPermanentID: id))
        let object = try await session.object(id, fetched: true, toMany: model.toManyNames(of: info))
        let presenter = ObjectPresenter(model: model, style: session.style)
        if json {
            Console.line(presenter.json(object, fetched: info.fetchedProperties.map(\.name)).rendered())
        } else {
            Console.output(presenter.record(object))
        }
    }
}
