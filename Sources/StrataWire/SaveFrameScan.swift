import Foundation
import NIOCore

/// A `ClientFrame` carrying a `SaveRequest` of inserts only, read by its
/// fields into the same messages SwiftProtobuf's decoder makes: what a
/// server answering inserts on its event loop needs, without the decoder's
/// generic machinery (a visitor per field, generic map and repeated-field
/// helpers, runtime metadata lookups) and with each insert's value
/// dictionary sized once (`Protocol/strata.proto`: `ClientFrame.request_id`
/// 1, `.save` 14; `SaveRequest.inserts` 1, `merge_policy` 4, `author` 5;
/// `InsertedObject` 1–4; `Value` 1–10).
///
/// The scan answers only the plain case and says nil otherwise: any other
/// top-level field, a save given twice (protobuf would merge them),
/// updates, deletes, a to-many value (`Value.objects`), any field this
/// version does not know, a field given twice where protobuf would merge
/// (a map entry's value, two kinds in one value), a wire type that does
/// not match its field, text that is not UTF-8, or malformed bytes. A
/// reader then decodes the frame in full, which decides what such a frame
/// means. For every frame it answers, ``save`` equals what
/// `Strata_V1_ClientFrame(serializedBytes:)` decodes (the tests check this
/// on every kind of value and on edge cases, and the fuzzer on random
/// frames).
public struct SaveFrameScan: Sendable, Equatable {
    /// `request_id`.
    public var requestID: UInt64 = 0
    /// `save`.
    public var save = Strata_V1_SaveRequest()

    /// Wire types.
    private static let varint: UInt64 = 0
    private static let fixed64: UInt64 = 1
    private static let delimited: UInt64 = 2

    /// Scans a `ClientFrame` payload; nil when it is not a plain save of inserts.
    public init?(scanning payload: ByteBuffer) {
        let scanned: SaveFrameScan? = payload.withUnsafeReadableBytes { bytes in
            var scan = SaveFrameScan()
            var reader = ProtobufReader(bytes: bytes)
            var sawSave = false
            while !reader.isAtEnd {
                guard let key = reader.varint() else { return nil }
                switch key {
                case 1 << 3 | Self.varint:
                    guard let value = reader.varint() else { return nil }
                    scan.requestID = value
                case 14 << 3 | Self.delimited:
                    guard !sawSave, var save = Self.message(&reader) else { return nil }
                    sawSave = true
                    guard Self.readSave(&save, into: &scan.save) else { return nil }
                default:
                    return nil
                }
            }
            return sawSave ? scan : nil
        }
        guard let scanned else { return nil }
        self = scanned
    }

    private init() {}

    /// The next length-delimited field's bytes as their own reader.
    private static func message(_ reader: inout ProtobufReader) -> ProtobufReader? {
        guard let length = reader.varint() else { return nil }
        return reader.slice(length)
    }

    /// The next length-delimited field as UTF-8 text.
    private static func text(_ reader: inout ProtobufReader) -> String? {
        guard let bytes = message(&reader) else { return nil }
        return String(validating: bytes.remaining, as: UTF8.self)
    }

    /// The next length-delimited field's bytes.
    private static func bytes(_ reader: inout ProtobufReader) -> Data? {
        guard let bytes = message(&reader) else { return nil }
        return Data(bytes.remaining)
    }

    /// The next eight bytes, little-endian, as a double.
    private static func double(_ reader: inout ProtobufReader) -> Double? {
        guard let bytes = reader.fixed64() else { return nil }
        return Double(bitPattern: bytes)
    }

    private static func readSave(_ reader: inout ProtobufReader, into save: inout Strata_V1_SaveRequest) -> Bool {
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return false }
            switch key {
            case 1 << 3 | delimited:
                guard var insert = message(&reader) else { return false }
                var inserted = Strata_V1_InsertedObject()
                guard readInsert(&insert, into: &inserted) else { return false }
                save.inserts.append(inserted)
            case 4 << 3 | varint:
                // An enum is an int32 on the wire; anything wider is left
                // to the decoder.
                guard let value = reader.varint(), value <= UInt64(Int32.max),
                      let policy = Strata_V1_MergePolicy(rawValue: Int(value)) else { return false }
                save.mergePolicy = policy
            case 5 << 3 | delimited:
                guard let author = text(&reader) else { return false }
                save.author = author
            default:
                // Updates, deletes, unknown fields, wrong wire types.
                return false
            }
        }
        return true
    }

    private static func readInsert(_ reader: inout ProtobufReader, into insert: inout Strata_V1_InsertedObject) -> Bool {
        var reserved = false
        while !reader.isAtEnd {
            let field = reader
            guard let key = reader.varint() else { return false }
            switch key {
            case 1 << 3 | delimited:
                guard let text = text(&reader) else { return false }
                insert.temporaryID = text
            case 2 << 3 | delimited:
                guard let text = text(&reader) else { return false }
                insert.entity = text
            case 3 << 3 | delimited:
                guard let text = text(&reader) else { return false }
                insert.configuration = text
            case 4 << 3 | delimited:
                if !reserved {
                    // Room for every entry at once (a dictionary grown one
                    // entry at a time is reallocated on the way).
                    guard let count = entryCount(field) else { return false }
                    insert.values.reserveCapacity(count + 1)
                    reserved = true
                }
                guard var entry = message(&reader), let (name, value) = readEntry(&entry) else { return false }
                // A key given again replaces the value, as the decoder does.
                insert.values[name] = value
            default:
                return false
            }
        }
        return true
    }

    /// How many `values` entries (field 4) an insert holds from `reader`'s
    /// position (a field's start) on; nil when it is malformed.
    private static func entryCount(_ reader: ProtobufReader) -> Int? {
        var reader = reader
        var count = 0
        while !reader.isAtEnd {
            guard let key = reader.varint(), reader.skip(wireType: key & 7) else { return nil }
            if key == 4 << 3 | delimited { count += 1 }
        }
        return count
    }

    /// A `values` map entry: its key (empty when absent) and value (no kind
    /// when absent), as the decoder reads them.
    private static func readEntry(_ reader: inout ProtobufReader) -> (String, Strata_V1_Value)? {
        var name = ""
        var value = Strata_V1_Value()
        var sawValue = false
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return nil }
            switch key {
            case 1 << 3 | delimited:
                guard let text = text(&reader) else { return nil }
                name = text
            case 2 << 3 | delimited:
                // A second value would be merged into the first.
                guard !sawValue, var body = message(&reader), let kind = readValue(&body) else { return nil }
                sawValue = true
                value.kind = kind
            default:
                return nil
            }
        }
        return (name, value)
    }

    /// A `Value`'s kind (nil inside when it has none); nil when the scan
    /// leaves it to the decoder.
    private static func readValue(_ reader: inout ProtobufReader) -> Strata_V1_Value.OneOf_Kind?? {
        var kind: Strata_V1_Value.OneOf_Kind?
        while !reader.isAtEnd {
            // Two kinds in one value: the decoder keeps the last, merging
            // messages; not worth mirroring.
            guard kind == nil, let key = reader.varint() else { return nil }
            switch key {
            case 1 << 3 | varint:
                guard let raw = reader.varint() else { return nil }
                // sint64: ZigZag.
                kind = .integer(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1))
            case 2 << 3 | fixed64:
                guard let value = double(&reader) else { return nil }
                kind = .double(value)
            case 3 << 3 | delimited:
                guard let text = text(&reader) else { return nil }
                kind = .decimal(text)
            case 4 << 3 | delimited:
                guard let text = text(&reader) else { return nil }
                kind = .string(text)
            case 5 << 3 | varint:
                guard let raw = reader.varint() else { return nil }
                kind = .boolean(raw != 0)
            case 6 << 3 | fixed64:
                guard let value = double(&reader) else { return nil }
                kind = .date(value)
            case 7 << 3 | delimited:
                guard let data = bytes(&reader) else { return nil }
                kind = .binary(data)
            case 8 << 3 | delimited:
                guard let data = bytes(&reader) else { return nil }
                kind = .uuid(data)
            case 9 << 3 | delimited:
                guard let text = text(&reader) else { return nil }
                kind = .uri(text)
            case 10 << 3 | delimited:
                guard let text = text(&reader) else { return nil }
                kind = .object(text)
            default:
                // `objects` (a to-many), unknown fields, wrong wire types.
                return nil
            }
        }
        return .some(kind)
    }
}
