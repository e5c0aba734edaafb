import Foundation
import StrataModel
import StrataText
import StrataWire
import SwiftProtobuf

/// The value parsers: the input is a wire `Value`, and, as text, a value
/// the CLI parses (``ValueText``, the first byte choosing the attribute
/// type) and an exact decimal. A value that is read must travel back
/// unchanged: written and read again, it is the same value; an accepted
/// decimal's text, or an accepted date's ISO-8601 text, reads the same.
enum ValueTarget {
    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        if let wire = try? Strata_V1_Value(serializedBytes: input) {
            let value: PropertyValue
            do {
                value = try PropertyValue(wire: wire, field: "fuzz")
            } catch let error as WireError {
                guard error.code == .invalidArgument, error.message.hasPrefix("fuzz") else {
                    throw FuzzFinding(.value, "refused with \(error.code) or without naming the field: \(error.message)")
                }
                return
            } catch {
                // Object IDs: the parser's own error.
                return
            }
            let again: PropertyValue
            do {
                again = try PropertyValue(wire: value.wire, field: "again")
            } catch {
                throw FuzzFinding(.value, "\(value) does not read back: \(error)")
            }
            guard again == value || (value.isNaN && again.isNaN) else {
                throw FuzzFinding(.value, "\(value) reads back as \(again)")
            }
        }
        if let first = input.first {
            let type = types[Int(first) % types.count]
            let typed = String(decoding: input.dropFirst().prefix(256), as: UTF8.self)
            do {
                let value = try ValueText.attributeValue(typed, type: type, field: "Fuzz.field")
                if case .date(let date) = value {
                    let text = ISO8601.format(date)
                    guard let again = ISO8601.parse(text), abs(again.timeIntervalSince(date)) < 1e-6 else {
                        throw FuzzFinding(.value, "the date '\(typed)' is written '\(text)', which does not read back")
                    }
                }
            } catch let failure as ValueText.Failure {
                guard failure.message.hasPrefix("Fuzz.field: ") else {
                    throw FuzzFinding(.value, "a refusal that does not name the field: \(failure.message)")
                }
            } catch let finding as FuzzFinding {
                throw finding
            } catch {
                throw FuzzFinding(.value, "an unexpected error: \(error)")
            }
        }
        let text = String(decoding: input.prefix(256), as: UTF8.self)
        if let decimal = PropertyValue.exactDecimal(text) {
            guard PropertyValue.exactDecimal(decimal.description) == decimal else {
                throw FuzzFinding(.value, "the decimal '\(text)' is \(decimal), whose text does not read back")
            }
        }
    }
}

/// The attribute types text is parsed for.
private let types = ["Integer 16", "Integer 32", "Integer 64", "Decimal", "Double", "Float", "String", "Boolean", "Date", "UUID", "URI", "Binary", "Transformable"]

private extension PropertyValue {
    var isNaN: Bool {
        if case .double(let d) = self { return d.isNaN }
        return false
    }
}
