import CStrataZlib

/// CRC-32 (IEEE 802.3, the zlib/PNG polynomial), the checksum of binary
/// store files: zlib's `crc32`, already linked for compressed frames.
enum CRC32 {
    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { checksum($0) }
    }

    /// The checksum of `bytes[range]`.
    static func checksum(_ bytes: [UInt8], range: Range<Int>) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in checksum(UnsafeBufferPointer(rebasing: buffer[range])) }
    }

    private static func checksum(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var crc = crc32(0, nil, 0)
        var start = 0
        // zlib takes a 32-bit length: larger buffers in pieces.
        while start < bytes.count {
            let length = min(bytes.count - start, Int(UInt32.max >> 1))
            crc = crc32(crc, bytes.baseAddress.map { $0 + start }, uInt(length))
            start += length
        }
        return UInt32(truncatingIfNeeded: crc)
    }
}
