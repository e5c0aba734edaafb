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

    @Test func aRowEncodesAsTheAsyncSideAnswersIt() throws {
        let state = try Strata_V1_ObjectState(serializedBytes: RowEncoding.encodedState(of: snapshot(1, version: 2, title: "Dune Messiah")))
        #expect(state == ServerCore.state(of: snapshot(1, version: 2, title: "Dune Messiah")))
        #expect(state.version == 2)
        #expect(state.values["author"] == nil, "nil values are left out, as the async side leaves them")
    }
}
