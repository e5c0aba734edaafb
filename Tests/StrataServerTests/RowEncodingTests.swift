import Foundation
import StrataModel
import StrataStore
import StrataWire
import SwiftProtobuf
import Testing
@testable import StrataServer

/// Encoded rows for event-loop gets: spliced answers decode to exactly the
/// message the server would build, and a row's bytes follow its version.
@Suite struct EncodedStateCacheTests {
    private func snapshot(_ key: Int64, version: Int64, title: String) -> Snapshot {
        Snapshot(
            objectID: ObjectID(storeIdentifier: "STORE", entityName: "Book", key: .permanent(key)),
            version: version,
            values: ["title": .string(title), "pages": .integer(key), "price": .decimal(Decimal(string: "9.99") ?? 0), "author": .null]
        )
    }

    @Test(arguments: [UInt64(1), 127, 128, 300, 1 << 35, UInt64.max])
    func splicedAnswersDecodeToTheBuiltMessage(requestID: UInt64) throws {
        let cache = EncodedStateCache(capacity: 10)
        for count in [0, 1, 3] {
            let snapshots = (0..<count).map { snapshot(Int64($0 + 1), version: 1, title: String(repeating: "t", count: 60 * ($0 + 1))) }
            let bytes = EncodedStateCache.refreshAnswer(requestID: requestID, states: try snapshots.map { try cache.encodedState(of: $0) })
            let decoded = try Strata_V1_ServerFrame(serializedBytes: bytes)
            var expected = Strata_V1_ServerFrame()
            expected.requestID = requestID
            expected.response = .refresh(Strata_V1_RefreshResponse.with { $0.objects = snapshots.map(ServerCore.state(of:)) })
            #expect(decoded == expected, "request \(requestID), \(count) objects")
        }
    }

    @Test func aNewVersionIsEncodedAgainAndTheCacheStaysBounded() throws {
        let cache = EncodedStateCache(capacity: 2)
        let first = try cache.encodedState(of: snapshot(1, version: 1, title: "Dune"))
        #expect(try cache.encodedState(of: snapshot(1, version: 1, title: "Dune")) == first)
        let updated = try cache.encodedState(of: snapshot(1, version: 2, title: "Dune Messiah"))
        let state = try Strata_V1_ObjectState(serializedBytes: updated)
        #expect(state.version == 2)
        #expect(state.values["title"] == PropertyValue.string("Dune Messiah").wire)
        #expect(state.values["author"] == nil, "nil values are left out, as the async side leaves them")
        // More rows than the capacity: each is still encoded right.
        for key in 2...5 {
            let bytes = try cache.encodedState(of: snapshot(Int64(key), version: 1, title: "Book \(key)"))
            #expect(try Strata_V1_ObjectState(serializedBytes: bytes).values["pages"] == PropertyValue.integer(Int64(key)).wire)
        }
        // A cache of capacity 0 encodes every time (map order may differ
        // between encodings: compare messages, not bytes).
        // A reset of the row cache (a replaced file may reuse keys and
        // versions) drops every entry: same id and version, new values.
        let reused = try cache.encodedState(of: snapshot(5, version: 1, title: "Replaced"), epoch: 1)
        #expect(try Strata_V1_ObjectState(serializedBytes: reused).values["title"] == PropertyValue.string("Replaced").wire)
        let none = EncodedStateCache(capacity: 0)
        #expect(try Strata_V1_ObjectState(serializedBytes: none.encodedState(of: snapshot(1, version: 1, title: "Dune"))) == Strata_V1_ObjectState(serializedBytes: first))
    }
}
