import Foundation
import StrataModel
import StrataText
import StrataWire

/// Shows wire values as the model types them: for people (table cells,
/// records) and as JSON (exact decimals and dates as strings, binary as
/// base64, to-many relationships as arrays, nil as null).
enum ValueFormatter {
    /// The text of `value` for people; `type` is the attribute's Core Data
    /// type name when known (a Float prints as a Float).
    static func text(_ value: Strata_V1_Value, type: String? = nil) -> String {
        switch value.kind {
        case nil: ""
        case .integer(let v): String(v)
        case .double(let v): type == "Float" ? String(Float(v)) : String(v)
        case .decimal(let v): v
        case .string(let v): v
        case .boolean(let v): v ? "true" : "false"
        case .date(let seconds): ISO8601.format(Date(timeIntervalSinceReferenceDate: seconds))
        case .binary(let v): v.base64EncodedString()
        case .uuid(let bytes): uuidText(bytes)
        case .uri(let v): v
        case .object(let id): id
        case .objects(let list): list.ids.joined(separator: ",")
        }
    }

    /// The text of `value` in one table cell: control characters escaped,
    /// long binary values shortened.
    static func cell(_ value: Strata_V1_Value, type: String? = nil) -> String {
        if case .binary(let data)? = value.kind, data.count > 24 {
            return String(data.prefix(18).base64EncodedString().prefix(24)) + "…(\(data.count) bytes)"
        }
        var cell = ""
        for character in text(value, type: type) {
            switch character {
            case "\n": cell += "\\n"
            case "\r": cell += "\\r"
            case "\t": cell += "\\t"
            default: cell.append(character)
            }
        }
        return cell
    }

    /// Whether values of this kind read better right-aligned.
    static func isNumeric(_ type: String?) -> Bool {
        switch type {
        case "Integer 16", "Integer 32", "Integer 64", "Decimal", "Double", "Float": true
        default: false
        }
    }

    /// The JSON form of `value`.
    static func json(_ value: Strata_V1_Value, type: String? = nil) -> JSONValue {
        switch value.kind {
        case nil: .null
        case .integer(let v): .integer(v)
        case .double(let v): type == "Float" ? .double(Double(String(Float(v))) ?? v) : .double(v)
        case .decimal(let v): .string(v)
        case .boolean(let v): .bool(v)
        case .objects(let list): .array(list.ids.map { .string($0) })
        case .string, .date, .binary, .uuid, .uri, .object: .string(text(value, type: type))
        }
    }

    /// A UUID's canonical text from its 16 bytes (hex when malformed).
    static func uuidText(_ bytes: Data) -> String {
        let b = [UInt8](bytes)
        guard b.count == 16 else { return b.map { String(format: "%02x", $0) }.joined() }
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])).uuidString
    }
}
