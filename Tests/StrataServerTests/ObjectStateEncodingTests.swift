import Foundation
import NIOCore
import StrataModel
import StrataStore
import StrataWire
import SwiftProtobuf
import Testing
@testable import StrataServer

/// Rows written straight to protobuf bytes decode to exactly the message
/// `ServerCore.state(of:)` builds, for every kind of value and the edges
/// of every length and number.
@Suite struct ObjectStateEncodingTests {
    private static let store = "6B29FC40-CA47-1067-B31D-00DD010662DA"

    /// Values of every kind the wire carries, with edge cases.
    private static let values: [PropertyValue] = [
        .integer(0), .integer(1), .integer(-1), .integer(63), .integer(-64), .integer(64), .integer(Int64.max), .integer(Int64.min),
        .double(0), .double(-0.0), .double(1.5), .double(.infinity), .double(.nan), .double(.leastNonzeroMagnitude),
        .decimal(0), .decimal(Decimal(string: "-12.50") ?? 0), .decimal(Decimal(string: "123456789012345678901234567890.12345678") ?? 0),
        .string(""), .string("a"), .string(String(repeating: "é", count: 100)), .string("nul\u{0}inside"), .string("👩‍👩‍👧"),
        .boolean(false), .boolean(true),
        .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: -1e9 + 0.25)),
        .binary(Data()), .binary(Data((0..<300).map { UInt8($0 & 0xFF) })),
        .uuid(UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 255))),
        .uri(""), .uri("https://example.com/a?b=c"),
        .object(ObjectID(storeIdentifier: store, entityName: "Author", key: .permanent(0))),
        .object(ObjectID(storeIdentifier: store, entityName: "Author", key: .permanent(Int64.max))),
        .object(ObjectID(storeIdentifier: store, entityName: "Author", key: .permanent(-7))),
        .object(ObjectID.temporary(entityName: "Author")),
        .objects([]),
        .objects((1...20).map { ObjectID(storeIdentifier: store, entityName: "Book", key: .permanent(Int64($0) * 1_000_003)) }),
        .null,
    ]

    private func decoded(_ snapshot: Snapshot) throws -> Strata_V1_ObjectState {
        var buffer = ByteBufferAllocator().buffer(capacity: 0)
        ObjectStateEncoding.writeState(of: snapshot, into: &buffer)
        return try Strata_V1_ObjectState(serializedBytes: ProtobufBytes(buffer))
    }

    @Test func everyKindOfValueDecodesToTheBuiltMessage() throws {
        for (index, value) in Self.values.enumerated() {
            for key: Int64 in [0, 1, 9, 10, 99, 100, 1 << 40, Int64.max] {
                let snapshot = Snapshot(
                    objectID: ObjectID(storeIdentifier: Self.store, entityName: "Book", key: .permanent(key)),
                    version: Int64(index) - 2,
                    values: ["v": value, "title": .string("T")]
                )
                let state = try decoded(snapshot)
                let expected = ServerCore.state(of: snapshot)
                // NaN is not equal to itself: compare its bits.
                if case .double(let v) = value, v.isNaN {
                    #expect(state.values["v"]?.double.isNaN == true)
                    #expect(state.id == expected.id && state.version == expected.version)
                } else {
                    #expect(state == expected, "value \(value), key \(key)")
                }
            }
        }
    }

    @Test func manyValuesInOneRowAndLongNamesDecodeToTheBuiltMessage() throws {
        var values: [String: PropertyValue] = [:]
        for (index, value) in Self.values.enumerated() where !(value.isDouble && value != value) {
            values[String(repeating: "n", count: index * 7 + 1)] = value
        }
        let snapshot = Snapshot(objectID: ObjectID(storeIdentifier: Self.store, entityName: String(repeating: "E", count: 200), key: .permanent(42)),
                                version: 1 << 50, values: values)
        #expect(try decoded(snapshot) == ServerCore.state(of: snapshot))
        // A snapshot in an entity's layout (slots) encodes the same.
        let layout = PropertyValues.Layout(names: values.keys.sorted())
        var slotted = PropertyValues(layout: layout)
        for (name, value) in values { slotted[name] = value }
        let inLayout = Snapshot(objectID: snapshot.objectID, version: snapshot.version, values: slotted)
        #expect(try decoded(inLayout) == ServerCore.state(of: snapshot))
    }

    @Test func batchesCarryTheirObjectsAndTheCount() throws {
        let snapshots = (0..<5).map { index in
            Snapshot(objectID: ObjectID(storeIdentifier: Self.store, entityName: "Book", key: .permanent(Int64(index))),
                     version: 1, values: ["pages": .integer(Int64(index)), "price": .decimal(Decimal(index) / 4)])
        }
        for count: UInt64 in [0, 5, 300] {
            var buffer = ByteBufferAllocator().buffer(capacity: 0)
            try ObjectStateEncoding.writeStates(of: snapshots, into: &buffer, limit: .max)
            ObjectStateEncoding.writeCount(count, into: &buffer)
            let batch = try Strata_V1_FetchBatch(serializedBytes: ProtobufBytes(buffer))
            #expect(batch == Strata_V1_FetchBatch.with {
                $0.objects = snapshots.map(ServerCore.state(of:))
                $0.count = count
            })
        }
    }
}

extension ObjectStateEncodingTests {
    @Test func aBatchPastTheFrameLimitIsRefusedBeforeItGrows() throws {
        let snapshots = (0..<10).map { index in
            Snapshot(objectID: ObjectID(storeIdentifier: Self.store, entityName: "Book", key: .permanent(Int64(index))),
                     version: 1, values: ["blob": .binary(Data(repeating: 7, count: 1000))])
        }
        var buffer = ByteBufferAllocator().buffer(capacity: 0)
        #expect(throws: WireError.self) {
            try ObjectStateEncoding.writeStates(of: snapshots, into: &buffer, limit: 5_000)
        }
        #expect(buffer.readableBytes <= 5_000, "rows are sized before they are written")
        var whole = ByteBufferAllocator().buffer(capacity: 0)
        try ObjectStateEncoding.writeStates(of: snapshots, into: &whole, limit: 20_000)
        #expect(try Strata_V1_FetchBatch(serializedBytes: ProtobufBytes(whole)).objects.count == 10)
    }
}

private extension PropertyValue {
    var isDouble: Bool {
        if case .double = self { return true }
        return false
    }
}
