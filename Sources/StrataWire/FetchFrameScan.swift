import NIOCore

/// A `ClientFrame` carrying a `FetchRequest`, read by its fields into the
/// same message SwiftProtobuf's decoder makes: what a server answering
/// fetches on its event loop needs, without the decoder's generic
/// machinery and with the variables' dictionary sized once
/// (`Protocol/strata.proto`: `ClientFrame.request_id` 1, `.fetch` 13;
/// `FetchRequest` 1–7, 10, 11; `VariableValue.value` 1; `SortKey` 1–3).
///
/// The scan answers only the plain case and says nil otherwise: any other
/// top-level field, a fetch given twice (protobuf would merge them), a
/// variable that is a list or an object, fetched properties or
/// relationships named or a store named (fields 8, 9, 12: such fetches are
/// not answered on the loop anyway), any field this version does not know,
/// a field given twice where protobuf would merge, a number wider than its
/// field, a wire type that does not match, text that is not UTF-8, or
/// malformed bytes. A reader then decodes the frame in full, which decides
/// what such a frame means. For every frame it answers, ``fetch`` equals
/// what `Strata_V1_ClientFrame(serializedBytes:)` decodes.
public struct FetchFrameScan: Sendable, Equatable {
    /// `request_id`.
    public var requestID: UInt64 = 0
    /// `fetch`.
    public var fetch = Strata_V1_FetchRequest()

    private static let varint = ProtobufReader.varintType
    private static let delimited = ProtobufReader.delimitedType

    /// Scans a `ClientFrame` payload; nil when it is not a plain fetch.
    public init?(scanning payload: ByteBuffer) {
        var fetch = Strata_V1_FetchRequest()
        guard let requestID = Self.scan(payload, into: &fetch) else { return nil }
        self.requestID = requestID
        self.fetch = fetch
    }

    /// What ``init(scanning:)`` reads, written into `fetch` (a new
    /// message), and the request's ID; nil when the payload is not a plain
    /// fetch (`fetch` then holds part of it). Written in place: a message
    /// handed out of a scan, an optional or a tuple is copied on the way,
    /// retaining each of its strings and collections.
    public static func scan(_ payload: ByteBuffer, into fetch: inout Strata_V1_FetchRequest) -> UInt64? {
        ProtobufReader.clientFrameRequestID(payload, requestField: 13) { readFetch(&$0, into: &fetch) }
    }

    private static func readFetch(_ reader: inout ProtobufReader, into fetch: inout Strata_V1_FetchRequest) -> Bool? {
        var reserved = false
        while !reader.isAtEnd {
            let field = reader
            guard let key = reader.varint() else { return nil }
            switch key {
            case 1 << 3 | delimited:
                guard let text = reader.text() else { return nil }
                fetch.entity = text
            case 2 << 3 | delimited:
                guard let text = reader.text() else { return nil }
                fetch.predicate = text
            case 3 << 3 | delimited:
                if !reserved {
                    guard let count = field.count(ofKey: 3 << 3 | delimited) else { return nil }
                    fetch.variables.reserveCapacity(count + 1)
                    reserved = true
                }
                guard var entry = reader.delimited(), let (name, value) = entry.stringKeyedEntry(readVariable) else { return nil }
                // A name given again replaces the value, as the decoder does.
                fetch.variables[name] = value ?? Strata_V1_VariableValue()
            case 4 << 3 | delimited:
                guard var body = reader.delimited(), let sort = readSortKey(&body) else { return nil }
                fetch.sort.append(sort)
            case 5 << 3 | varint:
                guard let value = uint32(&reader) else { return nil }
                fetch.limit = value
            case 6 << 3 | varint:
                guard let value = uint32(&reader) else { return nil }
                fetch.offset = value
            case 7 << 3 | varint:
                // An enum is an int32 on the wire; anything wider is left
                // to the decoder.
                guard let value = reader.varint(), value <= UInt64(Int32.max),
                      let type = Strata_V1_ResultType(rawValue: Int(value)) else { return nil }
                fetch.resultType = type
            case 10 << 3 | varint:
                guard let value = reader.varint() else { return nil }
                fetch.excludeSubentities = value != 0
            case 11 << 3 | varint:
                guard let value = uint32(&reader) else { return nil }
                fetch.batchSize = value
            default:
                // Fields 8, 9 and 12, unknown fields, wrong wire types.
                return nil
            }
        }
        return true
    }

    /// A `uint32` field's value; nil past 32 bits (left to the decoder).
    private static func uint32(_ reader: inout ProtobufReader) -> UInt32? {
        guard let value = reader.varint(), value <= UInt64(UInt32.max) else { return nil }
        return UInt32(value)
    }

    /// A `VariableValue` body holding a single value; nil for a list, an
    /// object or anything the value scan declines.
    private static func readVariable(_ reader: inout ProtobufReader) -> Strata_V1_VariableValue? {
        var variable = Strata_V1_VariableValue()
        while !reader.isAtEnd {
            guard variable.kind == nil, let key = reader.varint(), key == 1 << 3 | delimited,
                  var body = reader.delimited(), let kind = body.valueKind() else { return nil }
            var value = Strata_V1_Value()
            value.kind = kind
            variable.kind = .value(value)
        }
        return variable
    }

    /// A `SortKey` body.
    private static func readSortKey(_ reader: inout ProtobufReader) -> Strata_V1_SortKey? {
        var sort = Strata_V1_SortKey()
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return nil }
            switch key {
            case 1 << 3 | delimited:
                guard let text = reader.text() else { return nil }
                sort.key = text
            case 2 << 3 | varint:
                guard let value = reader.varint() else { return nil }
                sort.descending = value != 0
            case 3 << 3 | varint:
                guard let value = reader.varint() else { return nil }
                sort.caseInsensitive = value != 0
            default:
                return nil
            }
        }
        return sort
    }
}
