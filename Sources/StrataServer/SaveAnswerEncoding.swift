import NIOCore
import StrataContext
import StrataModel
import StrataWire

/// The answer to a save that took the direct route (new objects only),
/// written straight into one wire frame: header, `ServerFrame` with its
/// request ID, `SaveResponse` with each insert's temporary and permanent
/// ID and its version 1; the same message ``ServerCore/response(to:outcome:)``
/// builds, without building it (`SaveAnswerEncodingTests` decodes both).
/// Field numbers are `Protocol/strata.proto`'s.
enum SaveAnswerEncoding {
    /// `ServerFrame.save`'s field number.
    private static let saveField: UInt8 = 14

    /// The whole frame, or nil when the answer must be built as a message:
    /// a save that went through a context, an ID that is not permanent, an
    /// answer the connection compresses or one past `maxFrameBytes`.
    static func frame(requestID: UInt64, names: some Collection<String>, outcome: SaveOutcome, compresses: Bool, maxFrameBytes: Int) -> ByteBuffer? {
        guard outcome.route == .direct, names.count == outcome.insertedIDs.count else { return nil }
        var body = 0
        for (name, id) in zip(names, outcome.insertedIDs) {
            guard !id.isTemporary else { return nil }
            body += ProtobufWriter.delimitedSize(insertedSize(name: name, id: id)) + ProtobufWriter.delimitedSize(versionSize(id))
        }
        let frame = (requestID == 0 ? 0 : 1 + ProtobufWriter.varintSize(requestID)) + ProtobufWriter.delimitedSize(body)
        guard frame <= maxFrameBytes, !(compresses && frame >= WireProtocol.compressionThreshold) else { return nil }
        var buffer = ByteBufferAllocator().buffer(capacity: WireProtocol.headerSize + frame)
        // The frame header, as the frame encoder writes it (flag 0, big-endian length).
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(UInt32(frame))
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: frame) { memory in
            var writer = ProtobufWriter(memory)
            if requestID != 0 {
                writer.tag(1, ProtobufWriter.varintType)                   // ServerFrame.request_id
                writer.varint(requestID)
            }
            writer.tag(saveField, ProtobufWriter.delimitedType)            // ServerFrame.save
            writer.varint(UInt64(body))
            for (name, id) in zip(names, outcome.insertedIDs) {
                writer.tag(1, ProtobufWriter.delimitedType)                // SaveResponse.inserted
                writer.varint(UInt64(insertedSize(name: name, id: id)))
                if !name.isEmpty { writer.string(1, name) }                // InsertedID.temporary_id
                writer.id(2, id)                                           // InsertedID.id
            }
            for id in outcome.insertedIDs {
                writer.tag(2, ProtobufWriter.delimitedType)                // SaveResponse.versions entry
                writer.varint(UInt64(versionSize(id)))
                writer.id(1, id)                                           // key
                writer.tag(2, ProtobufWriter.varintType)                   // value: version 1
                writer.varint(1)
            }
            // The header already holds the length: the bytes must fill it.
            precondition(writer.offset == frame, "SaveAnswerEncoding: a save answer's size was computed wrong")
            return writer.offset
        }
        return buffer
    }

    /// The size of an `InsertedID`'s body.
    private static func insertedSize(name: String, id: ObjectID) -> Int {
        (name.isEmpty ? 0 : ProtobufWriter.delimitedSize(name.utf8.count)) + ProtobufWriter.delimitedSize(ProtobufWriter.idSize(id))
    }

    /// The size of a `versions` entry's body: the ID, then version 1.
    private static func versionSize(_ id: ObjectID) -> Int {
        ProtobufWriter.delimitedSize(ProtobufWriter.idSize(id)) + 2
    }
}
