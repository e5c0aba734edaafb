import NIOCore
import StrataWire
import SwiftProtobuf
import Testing

/// Varints written by hand match SwiftProtobuf's, byte for byte.
@Suite struct ByteBufferVarintTests {
    @Test("A varint written, set and sized as SwiftProtobuf encodes it", arguments: [
        UInt64(0), 1, 0x7F, 0x80, 0x3FFF, 0x4000, 300, 1 << 35, UInt64(Int64.max), UInt64.max,
    ])
    func matchesSwiftProtobuf(value: UInt64) throws {
        // Field 1 of a message holding one uint64: tag 0x08, then the
        // varint (a zero is not written at all: it is one byte, 0).
        let encoded: [UInt8] = try Google_Protobuf_UInt64Value.with { $0.value = value }.serializedBytes()
        let expected = value == 0 ? [0] : Array(encoded.dropFirst())
        var written = ByteBuffer(bytes: [0xAA])
        written.writeProtobufVarint(value)
        written.writeInteger(UInt8(0xBB))
        #expect(Array(written.readableBytesView) == [0xAA] + expected + [0xBB])
        #expect(ByteBuffer.protobufVarintSize(value) == expected.count)
        var set = ByteBuffer(repeating: 0, count: 12)
        #expect(set.setProtobufVarint(value, at: 1) == expected.count)
        #expect(Array(set.readableBytesView[1..<(1 + expected.count)]) == expected)
    }
}
