import StrataClient
import StrataModel
import StrataWire

/// What the network commands share: one client (one connection), the
/// served model fetched once, the output styles, and in the shell the
/// change set gathered between `begin` and `save`.
final class Session {
    /// The client; it connects on first use.
    let client: StrataClient
    /// Styles for standard output.
    let style: Style
    /// The change set the shell's `begin` opened, until `save` or `rollback`.
    var transaction: ChangeSet?
    private var cachedModel: ServedModel?

    init(configuration: ClientConfiguration) {
        client = StrataClient(configuration: configuration)
        style = Console.stdoutStyle
    }

    /// The served model, asked for once.
    func model() async throws -> ServedModel {
        if let cachedModel { return cachedModel }
        let model = ServedModel(try await client.model())
        cachedModel = model
        return model
    }

    /// Presents objects with the served model.
    func presenter() async throws -> ObjectPresenter {
        ObjectPresenter(model: try await model(), style: style)
    }

    /// A value parser that also knows the open change set's temporary IDs.
    func valueParser() async throws -> ValueParser {
        ValueParser(model: try await model(), pendingInserts: transaction?.temporaryEntities ?? [:])
    }

    /// The entity of the object `id` names: a pending insert's entity, or
    /// the entity in a permanent ID. Anything else is invalid input.
    func entityName(ofObject id: String) throws(CLIError) -> String {
        if let entity = transaction?.temporaryEntities[id] { return entity }
        return try Self.entityName(ofPermanentID: id)
    }

    /// The entity in a permanent object ID (`strata://<store>/<Entity>/p<key>`).
    static func entityName(ofPermanentID id: String) throws(CLIError) -> String {
        guard id.hasPrefix("strata://"), let objectID = ObjectID(uriRepresentation: id) else {
            throw .invalid("'\(id)' is not an object ID (strata://<store>/<Entity>/p<key>)")
        }
        return objectID.entityName
    }

    /// The current state of one object, or not found (exit 4).
    func object(_ id: String, fetched: Bool, toMany: [String] = []) async throws -> Strata_V1_ObjectState {
        let response = try await client.refresh([id], includeRelationships: toMany, skipFetched: !fetched)
        guard let object = response.objects.first(where: { $0.id == id }) ?? response.objects.first else {
            throw CLIError.notFound("no object \(id)")
        }
        return object
    }

    /// Closes the connection.
    func close() async {
        await client.close()
    }
}
