import ArgumentParser
import StrataWire

/// `strata fetch ENTITY [--where P] [--sort K,-K] [--limit N] [--offset N]
/// [--include NAME,…] [--json]`: objects as a table or a JSON array.
struct FetchCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch objects: a table, or a JSON array with --json."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Argument(help: "The entity (objects of its subentities are included).")
    var entity: String

    @Option(name: .customLong("where"), help: ArgumentHelp("A predicate in NSPredicate syntax.", valueName: "predicate"))
    var predicate: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Sort keys, comma-separated; '-' before a key sorts descending.", valueName: "key,-key"))
    var sort: String?

    @Option(help: "At most this many objects (0: no limit).")
    var limit: Int = 0

    @Option(help: "Skip this many objects first.")
    var offset: Int = 0

    @Option(help: ArgumentHelp("Fetched properties and to-many relationships to include, comma-separated.", valueName: "name,…"))
    var include: String?

    @Flag(help: "Print a JSON array of {\"id\",\"entity\",\"version\",\"values\"} objects.")
    var json = false

    func validate() throws {
        guard limit >= 0, limit <= Int(UInt32.max) else { throw ValidationError("--limit must be a number from 0 to \(UInt32.max)") }
        guard offset >= 0, offset <= Int(UInt32.max) else { throw ValidationError("--offset must be a number from 0 to \(UInt32.max)") }
    }

    func execute(in session: Session) async throws {
        let model = try await session.model()
        let info = try model.entity(entity)
        let sortKeys = try Self.sortKeys(sort ?? "")
        var fetched: [String] = []
        var toMany: [String] = []
        for name in Self.list(include ?? "") {
            if info.fetchedProperties.contains(where: { $0.name == name }) {
                fetched.append(name)
            } else if info.relationships.contains(where: { $0.name == name && $0.toMany }) {
                toMany.append(name)
            } else {
                let known = (info.fetchedProperties.map(\.name) + model.toManyNames(of: info)).joined(separator: ", ")
                throw CLIError.invalid("--include: \(entity) has no fetched property or to-many relationship '\(name)'"
                    + (known.isEmpty ? "" : " (it has: \(known))"))
            }
        }
        let request = Strata_V1_FetchRequest.with {
            $0.entity = entity
            $0.predicate = predicate ?? ""
            $0.sort = sortKeys
            $0.limit = UInt32(limit)
            $0.offset = UInt32(offset)
            $0.includeFetched = fetched
            $0.includeRelationships = toMany
        }
        let objects = try await session.client.fetch(request).objects
        let presenter = ObjectPresenter(model: model, style: session.style)
        if json {
            Console.line(JSONValue.array(objects.map { presenter.json($0, fetched: fetched) }).rendered())
        } else {
            Console.output(presenter.table(objects, entity: entity, fetched: fetched))
        }
    }

    /// Comma-separated names, trimmed, empty ones dropped.
    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `title,-pages` as sort keys.
    static func sortKeys(_ text: String) throws(CLIError) -> [Strata_V1_SortKey] {
        try list(text).map { (item: String) throws(CLIError) -> Strata_V1_SortKey in
            let descending = item.hasPrefix("-")
            let key = descending || item.hasPrefix("+") ? String(item.dropFirst()) : item
            guard !key.isEmpty else { throw .usage("--sort: '\(item)' names no key") }
            return Strata_V1_SortKey.with {
                $0.key = key
                $0.descending = descending
            }
        }
    }
}
