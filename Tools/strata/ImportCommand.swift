import ArgumentParser
import Foundation
import StrataClient
import StrataModel
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

    @Argument(help: "The entity of the objects.", completion: EntityCompletion.kind)
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
        /// The value of `key` for an object of `info`; a JSON string for a
        /// string attribute is taken as it is (so "" and "null" stay
        /// strings), anything else is typed from its text.
        func value(_ key: String, _ text: String?, in info: Strata_V1_EntityInfo, exactString: Bool = false) throws(CLIError) -> Strata_V1_Value? {
            if let attribute = info.attributes.first(where: { $0.name == key }) {
                if attribute.transient || !attribute.derivation.isEmpty { return nil }
                if exactString, attribute.type == "String", let text { return PropertyValue.string(text).wire }
            } else if info.relationships.contains(where: { $0.name == key }), !relationships {
                skipped.insert(key)
                return nil
            }
            return try parser.value(text ?? "null", key: key, entity: info)
        }
        /// The entity a row names (export writes each object's own): the
        /// command's entity or one of its concrete subentities.
        func rowEntity(_ name: String?, line: Int) throws(CLIError) -> Strata_V1_EntityInfo {
            guard let name, !name.isEmpty, name != entity else { return info }
            guard model.isKind(name, of: entity), let sub = model.entityIfKnown(name) else {
                throw CLIError.invalid("line \(line): an object of \(name), not of \(entity)")
            }
            if sub.isAbstract { throw CLIError.invalid("line \(line): \(name) is abstract") }
            return sub
        }

        var header: [String]?
        /// Export's leading id, entity and version columns, when the header has them.
        var metadataColumns = 0
        var pending: [(entity: String, values: [String: Strata_V1_Value], line: Int)] = []
        var imported = 0
        func flush() async throws {
            guard !pending.isEmpty else { return }
            var changes = ChangeSet()
            for object in pending { _ = changes.insert(entity: object.entity, configuration: "", values: object.values) }
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
            var objectInfo = info
            if format == .csv {
                guard let record = try reader.nextRecord() else { break }
                if record.count == 1, record[0].isEmpty { continue }
                guard let names = header else {
                    header = record
                    metadataColumns = Array(record.prefix(3)) == ["id", "entity", "version"] ? 3 : 0
                    continue
                }
                guard record.count == names.count else {
                    throw CLIError.invalid("line \(line): \(record.count) fields, and the header names \(names.count)")
                }
                if metadataColumns == 3 { objectInfo = try rowEntity(record[1], line: line) }
                for (name, text) in zip(names, record).dropFirst(metadataColumns) {
                    do {
                        values[name] = try value(name, text.isEmpty ? nil : text, in: objectInfo)
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
                    objectInfo = try rowEntity(object["entity"] as? String, line: line)
                    object = exported
                }
                for (name, member) in object {
                    let text: String?
                    switch member {
                    case is NSNull: text = nil
                    case let string as String: text = string
                    case let number as NSNumber:
                        let type = objectInfo.attributes.first { $0.name == name }?.type
                        text = type == "Boolean" ? (number.boolValue ? "true" : "false") : number.stringValue
                    case let ids as [String]: text = ids.joined(separator: ",")
                    default: throw CLIError.invalid("line \(line): \(name): expected a string, number, boolean, null or an array of object IDs")
                    }
                    do {
                        values[name] = try value(name, text, in: objectInfo, exactString: member is String)
                    } catch {
                        throw CLIError.invalid("line \(line): \(error.message)")
                    }
                }
            }
            pending.append((objectInfo.name, values, line))
            if pending.count >= batch { try await flush() }
        }
        try await flush()
        if !skipped.isEmpty {
            Console.error("import: relationships left out: \(skipped.sorted().joined(separator: ", ")) (--relationships imports them)")
        }
        Console.line("imported \(imported) \(entity) object\(imported == 1 ? "" : "s")")
    }
}
