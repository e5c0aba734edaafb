import NIOCore

extension ByteBuffer {
    /// How many bytes `value` takes as a protobuf varint.
    public static func protobufVarintSize(_ value: UInt64) -> Int {
        var value = value
        var size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }

    /// Writes `value` as a protobuf varint (for messages framed by hand).
    public mutating func writeProtobufVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            writeInteger(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        writeInteger(UInt8(value))
    }
}
