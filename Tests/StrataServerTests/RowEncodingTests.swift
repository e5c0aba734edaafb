import Foundation
import NIOCore
import StrataModel
import StrataStore
import StrataWire
import SwiftProtobuf
import Testing
@testable import StrataServer

/// Encoded rows for event-loop gets: spliced answers decode to exactly the
/// message the server would build.
@Suite struct RowEncodingTests {
    private func snapshot(_ key: Int64, version: Int64, title: String) -> Snapshot {
        Snapshot(
            objectID: ObjectID(storeIdentifier: "STORE", entityName: "Book", key: .permanent(key)),
            version: version,
            values: ["title": .string(title), "pages": .integer(key), "price": .decimal(Decimal(string: "9.99") ?? 0), "author": .null]
        )
    }

    @Test(arguments: [UInt64(1), 127, 128, 300, 1 << 35, UInt64.max])
    func splicedAnswersDecodeToTheBuiltMessage(requestID: UInt64) throws {
        for count in [0, 1, 3] {
            let snapshots = (0..<count).map { snapshot(Int64($0 + 1), version: 1, title: String(repeating: "t", count: 60 * ($0 + 1))) }
            // Encoded once: a map's order may differ between encodings.
            let states = snapshots.map(RowEncoding.encodedState(of:))
            // The framed answer: flag 0, big-endian payload length, payload.
            var frame = RowEncoding.refreshAnswerFrame(requestID: requestID, states: states, allocator: ByteBufferAllocator())
            #expect(frame.readInteger(as: UInt8.self) == 0)
            #expect(frame.readInteger(as: UInt32.self).map(Int.init) == frame.readableBytes)
            let decoded = try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(frame))
            var expected = Strata_V1_ServerFrame()
            expected.requestID = requestID
            expected.response = .refresh(Strata_V1_RefreshResponse.with { $0.objects = snapshots.map(ServerCore.state(of:)) })
            #expect(decoded == expected, "request \(requestID), \(count) objects")
        }
    }

    /// An answer written into the last one's buffer never changes a
    /// buffer the channel still holds, and reuses its storage once the
    /// channel let go of it.
    @Test func anAnswerReusesTheLastBufferOnlyOnceNothingElseHoldsIt() throws {
        let states = (1...3).map { RowEncoding.encodedState(of: snapshot(Int64($0), version: 1, title: "Book \($0)")) }
        let alone = (1...3).map { RowEncoding.refreshAnswerFrame(requestID: UInt64($0), states: [states[$0 - 1]], allocator: ByteBufferAllocator()) }
        var spare: ByteBuffer?
        // The channel still holds the first answer (unwritten) while the
        // second is made from the kept buffer: it must not be overwritten.
        let first = RowEncoding.refreshAnswerFrame(requestID: 1, states: [states[0]], allocator: ByteBufferAllocator(), reusing: &spare)
        #expect(spare == nil)
        spare = first
        let second = RowEncoding.refreshAnswerFrame(requestID: 2, states: [states[1]], allocator: ByteBufferAllocator(), reusing: &spare)
        #expect(spare == nil, "the kept buffer is taken")
        #expect(first == alone[0], "the held answer is unchanged")
        #expect(second == alone[1])
        // Once only the handler keeps it, the next answer is written over it in place.
        let storage = second.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        spare = consume second
        let third = RowEncoding.refreshAnswerFrame(requestID: 3, states: [states[2]], allocator: ByteBufferAllocator(), reusing: &spare)
        #expect(third == alone[2])
        #expect(third.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == storage, "no new storage")
        // A kept buffer too small for the answer grows.
        var small: ByteBuffer? = ByteBufferAllocator().buffer(capacity: 4)
        let grown = RowEncoding.refreshAnswerFrame(requestID: 1, states: [states[0]], allocator: ByteBufferAllocator(), reusing: &small)
        #expect(small == nil, "the kept buffer is taken")
        #expect(grown == alone[0])
    }

    @Test func aRowEncodesAsTheAsyncSideAnswersIt() throws {
        let state = try Strata_V1_ObjectState(serializedBytes: RowEncoding.encodedState(of: snapshot(1, version: 2, title: "Dune Messiah")))
        #expect(state == ServerCore.state(of: snapshot(1, version: 2, title: "Dune Messiah")))
        #expect(state.version == 2)
        #expect(state.values["author"] == nil, "nil values are left out, as the async side leaves them")
    }
}
