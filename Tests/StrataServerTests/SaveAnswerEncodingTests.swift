import Foundation
import NIOCore
import StrataContext
import StrataModel
import StrataWire
import SwiftProtobuf
import Testing
@testable import StrataServer

/// Save answers written straight into a frame decode to exactly the
/// message `ServerCore.response(to:outcome:)` builds, and are left to that
/// message whenever the direct bytes would not be the same answer.
@Suite struct SaveAnswerEncodingTests {
    private static let store = "6B29FC40-CA47-1067-B31D-00DD010662DA"

    private static func request(_ names: [String]) -> Strata_V1_SaveRequest {
        Strata_V1_SaveRequest.with { request in
            request.inserts = names.map { name in Strata_V1_InsertedObject.with { $0.temporaryID = name; $0.entity = "Book" } }
        }
    }

    private static func outcome(_ keys: [Int64], route: SaveOutcome.Route = .direct, entity: String = "Book") -> SaveOutcome {
        let ids = keys.map { ObjectID(storeIdentifier: store, entityName: entity, key: .permanent($0)) }
        var changes = ChangeSet(contextName: "c", origin: Coordinator.directInsertOrigin)
        changes.inserted = ids
        return SaveOutcome(insertedIDs: ids, changes: changes, route: route)
    }

    /// The frame's message, after checking its header.
    private static func decoded(_ frame: ByteBuffer) throws -> Strata_V1_ServerFrame {
        var frame = frame
        let flag = frame.readInteger(as: UInt8.self)
        let length = frame.readInteger(as: UInt32.self)
        #expect(flag == 0)
        #expect(length.map(Int.init) == frame.readableBytes)
        return try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(frame))
    }

    /// Names, primary keys and request IDs at the edges of their lengths.
    static let cases: [(names: [String], keys: [Int64], requestID: UInt64)] = {
        let many: [String] = (0..<256).map { "tmp-\($0)" }
        let manyKeys: [Int64] = (0..<256).map { Int64($0) * 1_000_003 }
        return [
            (["t1"], [1], 1),
            (["a", "b", "c"], [1, 127, 128], 127),
            (["é-👩‍👩‍👧", String(repeating: "x", count: 300)], [Int64.max, 0], 128),
            ([""], [-5], UInt64.max),
            (["only"], [42], 0),
            (many, manyKeys, 1 << 40),
        ]
    }()

    @Test("The bytes decode to the message", arguments: cases)
    func matchesTheMessage(names: [String], keys: [Int64], requestID: UInt64) throws {
        let request = Self.request(names)
        let outcome = Self.outcome(keys)
        let frame = try #require(SaveAnswerEncoding.frame(requestID: requestID, names: names, outcome: outcome, compresses: false, maxFrameBytes: 1 << 24))
        var expected = Strata_V1_ServerFrame()
        expected.requestID = requestID
        expected.response = .save(ServerCore.response(to: request, outcome: outcome))
        #expect(try Self.decoded(frame) == expected)
    }

    @Test func answersNotWrittenDirectlyAreLeftToTheMessage() {
        let names = ["a"]
        // A save that went through a context (versions, updates, deletes of its own).
        #expect(SaveAnswerEncoding.frame(requestID: 1, names: names, outcome: Self.outcome([1], route: .context), compresses: false, maxFrameBytes: 1 << 24) == nil)
        // An ID that is not permanent.
        let temporary = SaveOutcome(insertedIDs: [.temporary(entityName: "Book")], changes: ChangeSet(contextName: nil, origin: "x"), route: .direct)
        #expect(SaveAnswerEncoding.frame(requestID: 1, names: names, outcome: temporary, compresses: false, maxFrameBytes: 1 << 24) == nil)
        // Names and IDs that do not pair up.
        #expect(SaveAnswerEncoding.frame(requestID: 1, names: ["a", "b"], outcome: Self.outcome([1]), compresses: false, maxFrameBytes: 1 << 24) == nil)
        // Past the frame limit, or large enough to compress.
        #expect(SaveAnswerEncoding.frame(requestID: 1, names: names, outcome: Self.outcome([1]), compresses: false, maxFrameBytes: 20) == nil)
        let many = (0..<256).map { "tmp-\($0)" }
        #expect(SaveAnswerEncoding.frame(requestID: 1, names: many, outcome: Self.outcome((0..<256).map(Int64.init)), compresses: true, maxFrameBytes: 1 << 24) == nil)
        #expect(SaveAnswerEncoding.frame(requestID: 1, names: many, outcome: Self.outcome((0..<256).map(Int64.init)), compresses: false, maxFrameBytes: 1 << 24) != nil)
    }
}
