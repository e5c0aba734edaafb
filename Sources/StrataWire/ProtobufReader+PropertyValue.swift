import Foundation
import StrataModel

extension ProtobufReader {
    /// A `Value` read straight into the value it stands for.
    package enum ScannedValue: Equatable, Sendable {
        /// The value, as ``PropertyValue/init(wire:field:objectID:)`` reads it.
        case value(PropertyValue)
        /// An object, by the ID text the client sent (a permanent ID's URI
        /// or a temporary ID of the save), for the caller to resolve.
        case object(String)
    }

    /// ``insertedObject(reserve:value:add:)`` with each value read by
    /// ``scannedValue()``, specialized here: a generic function called from
    /// another module runs unspecialized, instantiating type metadata for
    /// every entry.
    package mutating func scannedInsertedObject(reserve: (Int) -> Void, add: (String, ScannedValue?) -> Void) -> (temporaryID: String, entity: String, configuration: String)? {
        insertedObject(reserve: reserve, value: { $0.scannedValue() }, add: add)
    }

    /// Reads a `Value` message's body (this reader's bytes, to its end)
    /// into what ``PropertyValue/init(wire:field:objectID:)`` makes of the
    /// message SwiftProtobuf decodes from it, with no message in between
    /// (a UUID's bytes go straight into the UUID). Nil wherever
    /// ``valueKind()`` leaves the value to the decoder, and wherever that
    /// initializer refuses it (a decimal that is not exact, a UUID that is
    /// not 16 bytes, a date that is not finite): then the caller decodes the
    /// message in full, which reports the error.
    package mutating func scannedValue() -> ScannedValue? {
        var read: ScannedValue?
        while !isAtEnd {
            // Two kinds in one value: the decoder keeps the last.
            guard read == nil, let key = varint() else { return nil }
            switch key {
            case 1 << 3 | Self.varintType:
                guard let raw = varint() else { return nil }
                // sint64: ZigZag.
                read = .value(.integer(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)))
            case 2 << 3 | Self.fixed64Type:
                guard let value = double() else { return nil }
                read = .value(.double(value))
            case 3 << 3 | Self.delimitedType:
                guard let text = text(), let decimal = PropertyValue.exactDecimal(text) else { return nil }
                read = .value(.decimal(decimal))
            case 4 << 3 | Self.delimitedType:
                guard let text = text() else { return nil }
                read = .value(.string(text))
            case 5 << 3 | Self.varintType:
                guard let raw = varint() else { return nil }
                read = .value(.boolean(raw != 0))
            case 6 << 3 | Self.fixed64Type:
                guard let seconds = double(), seconds.isFinite else { return nil }
                read = .value(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            case 7 << 3 | Self.delimitedType:
                guard let bytes = data() else { return nil }
                read = .value(.binary(bytes))
            case 8 << 3 | Self.delimitedType:
                guard let field = delimited(), field.remaining.count == 16 else { return nil }
                var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: field.remaining) }
                read = .value(.uuid(UUID(uuid: uuid)))
            case 9 << 3 | Self.delimitedType:
                guard let text = text() else { return nil }
                read = .value(.uri(text))
            case 10 << 3 | Self.delimitedType:
                guard let text = text() else { return nil }
                read = .object(text)
            default:
                // `objects` (a to-many list), unknown fields, wrong wire types.
                return nil
            }
        }
        // No kind: nil.
        return read ?? .value(.null)
    }
}
