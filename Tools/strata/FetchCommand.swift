import ArgumentParser
import StrataWire

/// `strata fetch ENTITY [--where P] [--sort K,-K] [--limit N] [--offset N]
/// [--include NAME,…] [--format table|json|ndjson|csv] [--no-header]`:
/// objects as a table, JSON, newline-delimited JSON or CSV; every format
/// but the table is written as the server's batches arrive.
struct FetchCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch objects: a table, JSON, newline-delimited JSON or CSV (--format).",
        discussion: """
            json, ndjson and csv are written as the server's batches arrive, so a large fetch \
            never sits whole in memory (strata fetch Item --format ndjson > items.ndjson exports \
            an entity); the table waits for every row to size its columns. CSV columns are the \
            entity's own properties in model order (a subentity's extra properties are in json \
            and ndjson).
            """
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Argument(help: "The entity (objects of its subentities are included).", completion: EntityCompletion.kind)
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

    @Option(help: "table (default), json (an array of {\"id\",\"entity\",\"version\",\"values\"} objects), ndjson (one such object per line) or csv.")
    var format: OutputFormat?

    @Flag(help: "The same as --format json.")
    var json = false

    @Flag(name: .customLong("no-header"), help: "Leave out the table's header and row count, or the CSV header.")
    var noHeader = false

    /// Objects per batch the server sends for streamed formats.
    static let streamBatch: UInt32 = 500

    func validate() throws {
        if json, let format, format != .json { throw ValidationError("--json and --format \(format.rawValue) disagree: give one") }
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
        let presenter = ObjectPresenter(model: model, style: session.style)
        let format = self.format ?? (json ? .json : .table)
        if format == .table {
            let objects = try await session.client.fetch(request).objects
            Console.output(presenter.table(objects, entity: entity, fetched: fetched, header: !noHeader))
            return
        }
        var streamed = request
        streamed.batchSize = Self.streamBatch
        let keys = presenter.keys(for: entity, objects: [])
        var written = 0
        if format == .csv, !noHeader { Console.output(presenter.csvHeader(keys: keys, fetched: fetched)) }
        if format == .json { Console.output("[") }
        for try await batch in try await session.client.fetchBatches(streamed) {
            var text = ""
            for object in batch.objects {
                switch format {
                case .json: text += (written == 0 ? "\n" : ",\n") + presenter.json(object, fetched: fetched).rendered(pretty: false)
                case .ndjson: text += presenter.json(object, fetched: fetched).rendered(pretty: false) + "\n"
                case .csv: text += presenter.csv(object, keys: keys, fetched: fetched)
                case .table: break
                }
                written += 1
            }
            Console.output(text)
        }
        // Cancellation ends the stream quietly: not a complete answer.
        try Task.checkCancellation()
        if format == .json { Console.output(written == 0 ? "]\n" : "\n]\n") }
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
