import Foundation
import StrataModel
import StrataWire
import SwiftProtobuf

/// The value parsers: the input is a wire `Value` (and, as text, an exact
/// decimal). A value that is read must travel back unchanged: written and
/// read again, it is the same value; an accepted decimal's text reads as
/// the same decimal.
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
        let text = String(decoding: input.prefix(256), as: UTF8.self)
        if let decimal = PropertyValue.exactDecimal(text) {
            guard PropertyValue.exactDecimal(decimal.description) == decimal else {
                throw FuzzFinding(.value, "the decimal '\(text)' is \(decimal), whose text does not read back")
            }
        }
    }
}

private extension PropertyValue {
    var isNaN: Bool {
        if case .double(let d) = self { return d.isNaN }
        return false
    }
}
