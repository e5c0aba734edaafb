import NIOCore
import StrataWire
import SwiftProtobuf
import Testing

/// ``ServerFrameHeader`` reads what SwiftProtobuf would decode, from the
/// bytes SwiftProtobuf encodes, and refuses malformed payloads.
@Suite("ServerFrame header scan")
struct ServerFrameHeaderTests {
    private static func bytes(_ frame: Strata_V1_ServerFrame) throws -> ByteBuffer {
        ByteBuffer(bytes: try frame.serializedBytes() as [UInt8])
    }

    private static func answer(id: UInt64) -> Strata_V1_ServerFrame {
        Strata_V1_ServerFrame.with {
            $0.requestID = id
            $0.refresh = Strata_V1_RefreshResponse.with {
                $0.objects = [Strata_V1_ObjectState.with {
                    $0.id = "strata://S/Book/p1"
                    $0.entity = "Book"
                    $0.version = 3
                    $0.values["title"] = Strata_V1_Value.with { $0.string = String(repeating: "t", count: 300) }
                }]
            }
        }
    }

    @Test("Request IDs of every varint length, with a response body to skip", arguments: [UInt64(1), 127, 128, 16_383, 16_384, 1 << 35, UInt64.max])
    func requestIDs(id: UInt64) throws {
        let header = try #require(ServerFrameHeader(scanning: try Self.bytes(Self.answer(id: id))))
        #expect(header.requestID == id)
        #expect(header.code == .ok)
        #expect(!header.moreFollows)
    }

    @Test("A refusal's status code among its message, details and conflicts")
    func status() throws {
        var frame = Self.answer(id: 9)
        frame.status = Strata_V1_Status.with {
            $0.code = .aborted
            $0.strataCode = 133_020
            $0.message = "conflict"
            $0.details = ["one", "two"]
            $0.conflicts = [Strata_V1_Conflict.with { $0.objectID = "strata://S/Book/p1"; $0.currentVersion = 4 }]
        }
        let header = try #require(ServerFrameHeader(scanning: try Self.bytes(frame)))
        #expect(header == ServerFrameHeader(requestID: 9, code: .aborted, moreFollows: false))
    }

    @Test("A fetch batch that more frames follow; a notification has request 0")
    func batchesAndNotifications() throws {
        let batch = Strata_V1_ServerFrame.with {
            $0.requestID = 4
            $0.moreFollows = true
            $0.fetch = Strata_V1_FetchBatch.with { $0.objectIds = ["a", "b"] }
        }
        #expect(ServerFrameHeader(scanning: try Self.bytes(batch)) == ServerFrameHeader(requestID: 4, code: .ok, moreFollows: true))
        let notification = Strata_V1_ServerFrame.with { $0.notification = Strata_V1_ChangeNotification() }
        #expect(ServerFrameHeader(scanning: try Self.bytes(notification))?.requestID == 0)
        #expect(ServerFrameHeader(scanning: ByteBuffer()) == ServerFrameHeader(requestID: 0, code: .ok, moreFollows: false))
    }

    @Test("Unknown fields of every wire type are skipped")
    func unknownFields() throws {
        var buffer = try Self.bytes(Self.answer(id: 300))
        // field 40 varint, field 41 fixed64, field 42 fixed32, field 43 bytes
        buffer.writeBytes([0xC0, 0x02, 0x96, 0x01])
        buffer.writeBytes([0xC9, 0x02] + [UInt8](repeating: 7, count: 8))
        buffer.writeBytes([0xD5, 0x02] + [UInt8](repeating: 7, count: 4))
        buffer.writeBytes([0xDA, 0x02, 0x03, 1, 2, 3])
        #expect(ServerFrameHeader(scanning: buffer)?.requestID == 300)
    }

    @Test("Messages decode from a buffer's readable bytes as from an array of them")
    func protobufBytes() throws {
        var buffer = ByteBuffer(bytes: [0xFF, 0xFF])
        buffer.writeBytes(try Self.answer(id: 77).serializedBytes() as [UInt8])
        buffer.moveReaderIndex(forwardBy: 2)
        let decoded = try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(buffer))
        #expect(decoded == Self.answer(id: 77))
        #expect(ProtobufBytes(buffer).count == buffer.readableBytes)
        var copy = ProtobufBytes([1, 2, 3])
        copy.withUnsafeMutableBytes { $0[0] = 9 }
        #expect(copy.withUnsafeBytes { Array($0) } == [9, 2, 3])
        #expect(ProtobufBytes(repeating: 4, count: 2).withUnsafeBytes { Array($0) } == [4, 4])
    }

    @Test("Truncated or malformed payloads are refused, not misread")
    func malformed() throws {
        let whole: [UInt8] = try Self.answer(id: 70_000).serializedBytes()
        // Every strict prefix that cuts a field in the middle fails; a cut
        // between fields reads as a shorter message, which is well formed.
        var refused = 0
        for length in 1..<whole.count where ServerFrameHeader(scanning: ByteBuffer(bytes: whole[..<length])) == nil {
            refused += 1
        }
        #expect(refused >= whole.count - 3)
        // A varint of eleven continuation bytes.
        #expect(ServerFrameHeader(scanning: ByteBuffer(bytes: [0x08] + [UInt8](repeating: 0xFF, count: 11))) == nil)
        // Wire types 3, 4 (groups), 6 and 7 are not used by proto3 messages.
        for wireType: UInt8 in [3, 4, 6, 7] {
            #expect(ServerFrameHeader(scanning: ByteBuffer(bytes: [(5 << 3) | wireType, 0])) == nil)
        }
        // A length beyond the payload.
        #expect(ServerFrameHeader(scanning: ByteBuffer(bytes: [0x12, 0x05, 0x08])) == nil)
    }
}
