import ArgumentParser
import Foundation
import StrataClient
import StrataWire

/// `strata import ENTITY FILE [--format ndjson|csv] [--batch N]`: inserts
/// the objects of a file, streamed, in saves of at most N objects.
struct ImportCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Insert the objects of an ndjson or CSV file, in saves of at most --batch objects.",
        discussion: """
            ndjson: one JSON object per line, either what 'fetch --format ndjson' writes (its \
            "values" are imported) or the property values themselves. CSV: a header of property \
            names, then one object per record; an empty field is nil; 'fetch --format csv' output \
            imports as it is (its id, entity and version columns are ignored). Values are typed by \
            the served model as 'insert' types them. Derived and transient attributes are left \
            out, and relationships too unless --relationships (their object IDs must exist on \
            this server). Each save is all or nothing; the import stops at the first refused one, \
            naming its lines; the saves before it stay.
            """
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Argument(help: "The entity of the objects.")
    var entity: String

    @Argument(help: "The file ('-' for standard input).")
    var file: String

    /// The formats an import reads.
    enum Format: String, ExpressibleByArgument {
        case ndjson
        case csv
    }

    @Option(help: "The file's format (default: csv for a .csv file, else ndjson; give it for standard input).")
    var format: Format?

    @Option(help: "Objects per save.")
    var batch: Int = 500

    @Flag(help: "Import relationships too (object IDs of this server's objects).")
    var relationships = false

    func validate() throws {
        guard (1...10_000).contains(batch) else { throw ValidationError("--batch must be from 1 to 10000") }
    }

    func execute(in session: Session) async throws {
        let model = try await session.model()
        let info = try model.entity(entity)
        if info.isAbstract { throw CLIError.invalid("\(entity) is abstract; import one of its subentities") }
        let format = self.format ?? (file.lowercased().hasSuffix(".csv") ? .csv : .ndjson)
        let parser = try await session.valueParser()
        var reader = try RecordReader(path: file, kind: format == .csv ? .csv : .lines)
        var skipped: Set<String> = []
        /// The values to send for `key` = `text`, or nil to leave it out.
        func value(_ key: String, _ text: String?) throws(CLIError) -> Strata_V1_Value? {
            if let attribute = info.attributes.first(where: { $0.name == key }) {
                if attribute.transient || !attribute.derivation.isEmpty { return nil }
            } else if info.relationships.contains(where: { $0.name == key }), !relationships {
                skipped.insert(key)
                return nil
            }
            return try parser.value(text ?? "null", key: key, entity: info)
        }

        var header: [String]?
        var pending: [(values: [String: Strata_V1_Value], line: Int)] = []
        var imported = 0
        func flush() async throws {
            guard !pending.isEmpty else { return }
            var changes = ChangeSet()
            for object in pending { _ = changes.insert(entity: entity, configuration: "", values: object.values) }
            do {
                _ = try await session.client.save(changes.request)
            } catch let error as StrataClientError {
                Console.error("import: the save of lines \(pending[0].line)–\(pending[pending.count - 1].line) was refused; \(imported) objects were imported before it")
                throw error
            }
            imported += pending.count
            pending.removeAll(keepingCapacity: true)
        }
        while true {
            let line = reader.line
            var values: [String: Strata_V1_Value] = [:]
            if format == .csv {
                guard let record = try reader.nextRecord() else { break }
                if record.count == 1, record[0].isEmpty { continue }
                guard let names = header else {
                    header = record
                    continue
                }
                guard record.count == names.count else {
                    throw CLIError.invalid("line \(line): \(record.count) fields, and the header names \(names.count)")
                }
                for (name, text) in zip(names, record) where !["id", "entity", "version"].contains(name) {
                    do {
                        values[name] = try value(name, text.isEmpty ? nil : text)
                    } catch {
                        throw CLIError.invalid("line \(line): \(error.message)")
                    }
                }
            } else {
                guard let text = reader.nextLine() else { break }
                if text.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                guard var object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
                    throw CLIError.invalid("line \(line): not a JSON object")
                }
                if let exported = object["values"] as? [String: Any], object["id"] != nil {
                    if let kind = object["entity"] as? String, kind != entity, !model.isKind(kind, of: entity) {
                        throw CLIError.invalid("line \(line): an object of \(kind), not of \(entity)")
                    }
                    object = exported
                }
                for (name, member) in object {
                    let text: String?
                    switch member {
                    case is NSNull: text = nil
                    case let string as String: text = string
                    case let number as NSNumber:
                        let type = info.attributes.first { $0.name == name }?.type
                        text = type == "Boolean" ? (number.boolValue ? "true" : "false") : number.stringValue
                    case let ids as [String]: text = ids.joined(separator: ",")
                    default: throw CLIError.invalid("line \(line): \(name): expected a string, number, boolean, null or an array of object IDs")
                    }
                    do {
                        values[name] = try value(name, text)
                    } catch {
                        throw CLIError.invalid("line \(line): \(error.message)")
                    }
                }
            }
            pending.append((values, line))
            if pending.count >= batch { try await flush() }
        }
        try await flush()
        if !skipped.isEmpty {
            Console.error("import: relationships left out: \(skipped.sorted().joined(separator: ", ")) (--relationships imports them)")
        }
        Console.line("imported \(imported) \(entity) object\(imported == 1 ? "" : "s")")
    }
}
