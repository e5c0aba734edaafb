import StrataWire

/// Shows fetched or refreshed objects: a table (object ID first, aligned
/// columns), a record (one property per line), or JSON objects of the form
/// `{"id", "entity", "version", "values": {…}, "fetched": {name: […]}}`.
struct ObjectPresenter {
    /// The served model, for property order and types.
    let model: ServedModel
    /// Styles for standard output.
    let style: Style

    /// The keys shown for objects of `entityName`, in model order, then
    /// the extra keys `objects` carry (to-many lists asked for, newer
    /// properties), sorted.
    func keys(for entityName: String, objects: [Strata_V1_ObjectState]) -> [String] {
        var keys: [String] = []
        var seen: Set<String> = []
        func add(_ key: String) { if seen.insert(key).inserted { keys.append(key) } }
        if let entity = model.entityIfKnown(entityName) { model.shownKeys(of: entity).forEach(add) }
        for object in objects where object.entity != entityName {
            if let entity = model.entityIfKnown(object.entity) { model.shownKeys(of: entity).forEach(add) }
        }
        var extra: Set<String> = []
        for object in objects { extra.formUnion(object.values.keys.filter { !seen.contains($0) }) }
        extra.sorted().forEach(add)
        return keys
    }

    /// The Core Data type of `entity.key`, when it is an attribute.
    func type(of key: String, in entityName: String) -> String? {
        model.entityIfKnown(entityName)?.attributes.first { $0.name == key }?.type
    }

    /// The JSON object of one object; every shown property is present
    /// (nil as null), fetched properties only when included.
    func json(_ object: Strata_V1_ObjectState, fetched names: [String]? = nil) -> JSONValue {
        let values: [(String, JSONValue)] = keys(for: object.entity, objects: [object]).map { key in
            (key, object.values[key].map { ValueFormatter.json($0, type: type(of: key, in: object.entity)) } ?? .null)
        }
        var members: [(String, JSONValue)] = [
            ("id", .string(object.id)),
            ("entity", .string(object.entity)),
            ("version", .integer(object.version)),
            ("values", .object(values)),
        ]
        let fetchedNames = names ?? object.fetched.keys.sorted()
        if !fetchedNames.isEmpty {
            members.append(("fetched", .object(fetchedNames.map { name in
                (name, .array((object.fetched[name]?.ids ?? []).map { .string($0) }))
            })))
        }
        return .object(members)
    }

    /// The CSV header of objects of `entityName` (``csv(_:keys:fetched:)``'s columns).
    func csvHeader(keys: [String], fetched: [String]) -> String {
        CSVWriter.line(["id", "entity", "version"] + keys + fetched)
    }

    /// One object as a CSV line with the columns `keys` (the entity's
    /// shown properties: values as the table shows them, untruncated; nil
    /// empty) then the fetched properties' IDs, comma-separated.
    func csv(_ object: Strata_V1_ObjectState, keys: [String], fetched: [String]) -> String {
        var fields = [object.id, object.entity, String(object.version)]
        fields += keys.map { key in object.values[key].map { ValueFormatter.text($0, type: type(of: key, in: object.entity)) } ?? "" }
        fields += fetched.map { (object.fetched[$0]?.ids ?? []).joined(separator: ",") }
        return CSVWriter.line(fields)
    }

    /// A table of `objects` of `entityName`, with a `(N rows)` footer
    /// (header and footer left out without `header`).
    func table(_ objects: [Strata_V1_ObjectState], entity entityName: String, fetched: [String], header: Bool = true) -> String {
        let keys = keys(for: entityName, objects: objects)
        var columns = [TableRenderer.Column(title: "id"), TableRenderer.Column(title: "version", rightAligned: true)]
        columns += keys.map { TableRenderer.Column(title: $0, rightAligned: ValueFormatter.isNumeric(type(of: $0, in: entityName))) }
        columns += fetched.map { TableRenderer.Column(title: $0) }
        var table = TableRenderer(columns: columns, style: style, showsHeader: header)
        for object in objects {
            var row = [object.id, String(object.version)]
            row += keys.map { key in object.values[key].map { ValueFormatter.cell($0, type: type(of: key, in: object.entity)) } ?? "" }
            row += fetched.map { (object.fetched[$0]?.ids ?? []).joined(separator: ",") }
            table.rows.append(row)
        }
        guard header else { return table.render() }
        return table.render() + style.dim("(\(objects.count) \(objects.count == 1 ? "row" : "rows"))") + "\n"
    }

    /// One object as `name  value` lines, fetched properties last (one
    /// destination ID per line).
    func record(_ object: Strata_V1_ObjectState) -> String {
        let keys = keys(for: object.entity, objects: [object])
        let fetchedNames = object.fetched.keys.sorted()
        let width = (["id", "entity", "version"] + keys + fetchedNames).map(\.count).max() ?? 0
        func label(_ name: String) -> String { style.bold(name + String(repeating: " ", count: width - name.count)) }
        var lines = [
            "\(label("id"))  \(object.id)",
            "\(label("entity"))  \(object.entity)",
            "\(label("version"))  \(object.version)",
        ]
        for key in keys {
            let text = object.values[key].map { ValueFormatter.cell($0, type: type(of: key, in: object.entity)) }
            lines.append("\(label(key))  \(text ?? style.dim("nil"))")
        }
        for name in fetchedNames {
            let ids = object.fetched[name]?.ids ?? []
            lines.append("\(label(name))  \(style.dim("(\(ids.count))"))")
            for id in ids { lines.append(String(repeating: " ", count: width + 2) + "  \(id)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
