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

    /// Sets `value` as a protobuf varint at `index` (within the written
    /// bytes) without moving the indices; returns how many bytes it took.
    @discardableResult
    public mutating func setProtobufVarint(_ value: UInt64, at index: Int) -> Int {
        var value = value
        var at = index
        while value >= 0x80 {
            at += setInteger(UInt8(truncatingIfNeeded: value) | 0x80, at: at)
            value >>= 7
        }
        at += setInteger(UInt8(value), at: at)
        return at - index
    }
}
