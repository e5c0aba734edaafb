/// A JSON value that keeps its object keys in the order they were given,
/// so `--json` output reads in a stable, sensible order
/// (`id`, `entity`, `version`, `values`, …).
indirect enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// The value as JSON text: indented two spaces when `pretty`, else on one line.
    func rendered(pretty: Bool = true) -> String {
        var text = ""
        write(to: &text, pretty: pretty, indent: 0)
        return text
    }

    private func write(to text: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .integer(let value): text += String(value)
        case .unsigned(let value): text += String(value)
        case .double(let value):
            // JSON has no NaN or infinity.
            text += value.isFinite ? Self.number(value) : "null"
        case .string(let value): Self.quote(value, into: &text)
        case .array(let values):
            if values.isEmpty { text += "[]"; return }
            text += "["
            for (index, value) in values.enumerated() {
                if index > 0 { text += "," }
                if pretty { text += "\n" + String(repeating: "  ", count: indent + 1) }
                value.write(to: &text, pretty: pretty, indent: indent + 1)
            }
            if pretty { text += "\n" + String(repeating: "  ", count: indent) }
            text += "]"
        case .object(let members):
            if members.isEmpty { text += "{}"; return }
            text += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { text += "," }
                if pretty { text += "\n" + String(repeating: "  ", count: indent + 1) }
                Self.quote(key, into: &text)
                text += pretty ? ": " : ":"
                value.write(to: &text, pretty: pretty, indent: indent + 1)
            }
            if pretty { text += "\n" + String(repeating: "  ", count: indent) }
            text += "}"
        }
    }

    /// A finite double as a JSON number (Swift's shortest round-trip form).
    private static func number(_ value: Double) -> String {
        let text = String(value)
        // Swift writes "1e-05"; JSON accepts exponents with leading zeros,
        // but not a bare "inf" (excluded above) or a leading ".".
        return text
    }

    private static func quote(_ string: String, into text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
