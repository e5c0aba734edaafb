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
        if value < 0x80 {
            writeInteger(UInt8(value))
            return
        }
        // Made on the stack and written at once: each write of a byte
        // checks the buffer's capacity and uniqueness again.
        var bytes: (UInt64, UInt16) = (0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            var value = value
            var count = 0
            while value >= 0x80 {
                raw[count] = UInt8(truncatingIfNeeded: value) | 0x80
                value >>= 7
                count += 1
            }
            raw[count] = UInt8(value)
            writeBytes(UnsafeRawBufferPointer(rebasing: raw[...count]))
        }
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
