import Foundation
import StrataModel
import StrataWire

/// Attribute values from the text a person types (the `strata` CLI's
/// `key=value`): every check happens here, and a value that does not fit
/// names the property and the expected type.
///
/// Integers are checked against their width, decimals are exact
/// (``PropertyValue/exactDecimal(_:)``), booleans are `true/false/yes/no`
/// (and `1/0`), dates ISO-8601 (``ISO8601``), UUIDs and URIs as text,
/// binary and transformable values base64.
public enum ValueText {
    /// Text that is not a value of its attribute's type.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// Names the property, the type expected and the text given.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    /// An attribute value of Core Data type `type` (`Integer 32`, `Date`,
    /// …) for the property `field` (named in the failure).
    public static func attributeValue(_ text: String, type: String, field: String) throws(Failure) -> PropertyValue {
        func mismatch(_ expected: String) -> Failure {
            Failure(message: "\(field): expected \(type) (\(expected)), got '\(text)'")
        }
        switch type {
        case "Integer 16", "Integer 32", "Integer 64":
            let range: ClosedRange<Int64> = switch type {
            case "Integer 16": Int64(Int16.min)...Int64(Int16.max)
            case "Integer 32": Int64(Int32.min)...Int64(Int32.max)
            default: Int64.min...Int64.max
            }
            guard let value = Int64(text), range.contains(value) else {
                throw mismatch("a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return .integer(value)
        case "Decimal":
            guard let value = PropertyValue.exactDecimal(text) else {
                throw mismatch("an exact decimal number such as 12.50, at most 38 significant digits")
            }
            return .decimal(value)
        case "Double":
            guard let value = Double(text), value.isFinite else { throw mismatch("a finite number") }
            return .double(value)
        case "Float":
            guard let value = Double(text), value.isFinite, abs(value) <= Double(Float.greatestFiniteMagnitude) else {
                throw mismatch("a finite number within Float's range")
            }
            return .double(value)
        case "String":
            return .string(text)
        case "Boolean":
            switch text.lowercased() {
            case "true", "yes", "1": return .boolean(true)
            case "false", "no", "0": return .boolean(false)
            default: throw mismatch("true, false, yes or no")
            }
        case "Date":
            guard let date = ISO8601.parse(text) else {
                throw mismatch("an ISO-8601 date such as 2024-05-01T12:30:00Z or 2024-05-01T12:30:00.250+02:00")
            }
            return .date(date)
        case "UUID":
            guard let uuid = UUID(uuidString: text) else { throw mismatch("a UUID such as 4F1D2C3B-…") }
            return .uuid(uuid)
        case "URI":
            guard !text.contains(" "), URL(string: text) != nil else { throw mismatch("a URI") }
            return .uri(text)
        case "Binary", "Transformable":
            guard let data = Data(base64Encoded: text) else { throw mismatch("base64-encoded bytes") }
            return .binary(data)
        default:
            throw Failure(message: "\(field): attributes of type \(type) cannot be set from text")
        }
    }
}
