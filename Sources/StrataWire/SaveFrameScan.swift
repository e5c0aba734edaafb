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

    private static let varint = ProtobufReader.varintType
    private static let delimited = ProtobufReader.delimitedType

    /// Scans a `ClientFrame` payload; nil when it is not a plain save of inserts.
    public init?(scanning payload: ByteBuffer) {
        guard let (requestID, save) = ProtobufReader.clientFrame(payload, requestField: 14, Self.readSave) else { return nil }
        self.requestID = requestID
        self.save = save
    }

    private static func readSave(_ reader: inout ProtobufReader) -> Strata_V1_SaveRequest? {
        var save = Strata_V1_SaveRequest()
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return nil }
            switch key {
            case 1 << 3 | delimited:
                guard var body = reader.delimited(), let insert = readInsert(&body) else { return nil }
                save.inserts.append(insert)
            case 4 << 3 | varint:
                // An enum is an int32 on the wire; anything wider is left
                // to the decoder.
                guard let value = reader.varint(), value <= UInt64(Int32.max),
                      let policy = Strata_V1_MergePolicy(rawValue: Int(value)) else { return nil }
                save.mergePolicy = policy
            case 5 << 3 | delimited:
                guard let author = reader.text() else { return nil }
                save.author = author
            default:
                // Updates, deletes, unknown fields, wrong wire types.
                return nil
            }
        }
        return save
    }

    private static func readInsert(_ reader: inout ProtobufReader) -> Strata_V1_InsertedObject? {
        var insert = Strata_V1_InsertedObject()
        var values: [String: Strata_V1_Value] = [:]
        let fields = reader.insertedObject(reserve: { values.reserveCapacity($0 + 1) }, value: { $0.valueKind() }) { name, kind in
            var value = Strata_V1_Value()
            value.kind = kind ?? nil
            values[name] = value
        }
        guard let fields else { return nil }
        insert.temporaryID = fields.temporaryID
        insert.entity = fields.entity
        insert.configuration = fields.configuration
        insert.values = values
        return insert
    }
}
