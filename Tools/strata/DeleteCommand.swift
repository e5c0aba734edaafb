import ArgumentParser
import StrataWire

/// `strata delete ID …`: deletes objects in one save; prints every object
/// deleted (cascades included), one ID per line.
struct DeleteCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete objects (in one save) and print the IDs deleted."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Argument(help: "Object IDs.")
    var ids: [String]

    @Flag(help: "Print {\"deleted\": […], \"updated\": […]} as JSON.")
    var json = false

    func validate() throws {
        if ids.isEmpty { throw ValidationError("delete needs at least one object ID") }
    }

    func execute(in session: Session) async throws {
        let model = try await session.model()
        for id in ids { _ = try model.entity(session.entityName(ofObject: id)) }
        if var transaction = session.transaction {
            for id in ids { transaction.delete(id: id) }
            session.transaction = transaction
            return
        }
        var changes = ChangeSet()
        for id in ids { changes.delete(id: id) }
        let response = try await session.client.save(changes.request)
        if json {
            Console.line(JSONValue.object([
                ("deleted", .array(response.deleted.map { .string($0) })),
                ("updated", .array(response.updated.map { .string($0) })),
            ]).rendered())
        } else {
            for id in response.deleted { Console.line(id) }
        }
    }
}
