import Foundation
import NIOCore

extension ProtobufReader {
    /// Wire types.
    package static let varintType: UInt64 = 0
    package static let fixed64Type: UInt64 = 1
    package static let delimitedType: UInt64 = 2

    /// Reads a `ClientFrame` payload that holds `request_id` (field 1) and
    /// one request in field `field`, whose body `read` reads; nil for any
    /// other top-level field, the request given twice (protobuf would merge
    /// them), no request, `read` declining, or malformed bytes. A
    /// `request_id` given twice counts once, the last, as the decoder reads it.
    package static func clientFrame<Request>(_ payload: ByteBuffer, requestField field: UInt64,
                                     _ read: (inout ProtobufReader) -> Request?) -> (requestID: UInt64, request: Request)? {
        payload.withUnsafeReadableBytes { bytes in
            var reader = ProtobufReader(bytes: bytes)
            var requestID: UInt64 = 0
            var request: Request?
            while !reader.isAtEnd {
                guard let key = reader.varint() else { return nil }
                switch key {
                case 1 << 3 | varintType:
                    guard let value = reader.varint() else { return nil }
                    requestID = value
                case field << 3 | delimitedType:
                    guard request == nil, var body = reader.delimited(), let decoded = read(&body) else { return nil }
                    request = decoded
                default:
                    return nil
                }
            }
            return request.map { (requestID, $0) }
        }
    }

    /// ``clientFrame(_:requestField:_:)`` for a `read` that keeps what it
    /// reads itself (answering whether it read the request), specialized
    /// here: a generic function called from another module runs
    /// unspecialized, instantiating type metadata on every call.
    package static func clientFrameRequestID(_ payload: ByteBuffer, requestField field: UInt64, _ read: (inout ProtobufReader) -> Bool?) -> UInt64? {
        clientFrame(payload, requestField: field, read)?.requestID
    }

    /// Reads a `Value` message's body (this reader's bytes, to its end)
    /// as SwiftProtobuf decodes it: its kind, or nil inside when it has
    /// none. Nil when a scan leaves it to the decoder: two kinds in one
    /// value (the decoder keeps the last, merging messages), `objects`
    /// (a to-many list), an unknown field, a wire type that does not match
    /// its field, text that is not UTF-8, or malformed bytes.
    mutating func valueKind() -> Strata_V1_Value.OneOf_Kind?? {
        var kind: Strata_V1_Value.OneOf_Kind?
        while !isAtEnd {
            guard kind == nil, let key = varint() else { return nil }
            switch key {
            case 1 << 3 | Self.varintType:
                guard let raw = varint() else { return nil }
                // sint64: ZigZag.
                kind = .integer(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1))
            case 2 << 3 | Self.fixed64Type:
                guard let value = double() else { return nil }
                kind = .double(value)
            case 3 << 3 | Self.delimitedType:
                guard let value = text() else { return nil }
                kind = .decimal(value)
            case 4 << 3 | Self.delimitedType:
                guard let value = text() else { return nil }
                kind = .string(value)
            case 5 << 3 | Self.varintType:
                guard let raw = varint() else { return nil }
                kind = .boolean(raw != 0)
            case 6 << 3 | Self.fixed64Type:
                guard let value = double() else { return nil }
                kind = .date(value)
            case 7 << 3 | Self.delimitedType:
                guard let value = data() else { return nil }
                kind = .binary(value)
            case 8 << 3 | Self.delimitedType:
                guard let value = data() else { return nil }
                kind = .uuid(value)
            case 9 << 3 | Self.delimitedType:
                guard let value = text() else { return nil }
                kind = .uri(value)
            case 10 << 3 | Self.delimitedType:
                guard let value = text() else { return nil }
                kind = .object(value)
            default:
                return nil
            }
        }
        return .some(kind)
    }

    /// Reads a `map<string, Message>` entry's body (this reader's bytes, to
    /// its end) as SwiftProtobuf decodes it: its key (empty when absent)
    /// and its value's body read by `value` (nil when absent). Nil when a
    /// scan leaves it to the decoder: a value given twice (the decoder
    /// merges them), `value` declining, an unknown field, a wire type that
    /// does not match, a key that is not UTF-8, or malformed bytes.
    package mutating func stringKeyedEntry<Value>(_ value: (inout ProtobufReader) -> Value?) -> (key: String, value: Value?)? {
        var key = ""
        var read: Value?
        while !isAtEnd {
            guard let field = varint() else { return nil }
            switch field {
            case 1 << 3 | Self.delimitedType:
                guard let text = text() else { return nil }
                key = text
            case 2 << 3 | Self.delimitedType:
                guard read == nil, var body = delimited(), let decoded = value(&body) else { return nil }
                read = decoded
            default:
                return nil
            }
        }
        return (key, read)
    }

    /// Reads an `InsertedObject` body (this reader's bytes, to its end) as
    /// SwiftProtobuf decodes it: its text fields, returned, and each
    /// `values` entry's key and value (read by `value`; nil when the entry
    /// has none) handed to `add` in order, so that a key given again
    /// replaces the value, as the decoder does. `reserve` is told how many
    /// entries there are before the first. Nil where a scan leaves the
    /// message to the decoder: an entry ``stringKeyedEntry(_:)`` declines,
    /// an unknown field, a wire type that does not match, text that is not
    /// UTF-8, or malformed bytes.
    package mutating func insertedObject<Value>(reserve: (Int) -> Void, value: (inout ProtobufReader) -> Value?,
                                                add: (String, Value?) -> Void) -> (temporaryID: String, entity: String, configuration: String)? {
        var fields = (temporaryID: "", entity: "", configuration: "")
        var reserved = false
        while !isAtEnd {
            let field = self
            guard let key = varint() else { return nil }
            switch key {
            case 1 << 3 | Self.delimitedType:
                guard let text = text() else { return nil }
                fields.temporaryID = text
            case 2 << 3 | Self.delimitedType:
                guard let text = text() else { return nil }
                fields.entity = text
            case 3 << 3 | Self.delimitedType:
                guard let text = text() else { return nil }
                fields.configuration = text
            case 4 << 3 | Self.delimitedType:
                if !reserved {
                    // Room for every entry at once (a dictionary grown one
                    // entry at a time is reallocated on the way).
                    guard let count = field.count(ofKey: 4 << 3 | Self.delimitedType) else { return nil }
                    reserve(count)
                    reserved = true
                }
                guard var entry = delimited(), let (name, read) = entry.stringKeyedEntry(value) else { return nil }
                add(name, read)
            default:
                return nil
            }
        }
        return fields
    }

    /// How many fields with this key (a field number and wire type) the
    /// rest of the message holds from this position (a field's start) on;
    /// nil when it is malformed. For sizing a map or list once.
    package func count(ofKey wanted: UInt64) -> Int? {
        var reader = self
        var count = 0
        while !reader.isAtEnd {
            guard let key = reader.varint(), reader.skip(wireType: key & 7) else { return nil }
            if key == wanted { count += 1 }
        }
        return count
    }
}
