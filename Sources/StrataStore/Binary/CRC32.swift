/// CRC-32 (IEEE 802.3, the zlib/PNG polynomial, reflected), the checksum
/// of binary store files. Slicing-by-8: eight table lookups per eight bytes.
enum CRC32 {
    /// Eight tables of 256 entries, one after the other: entry `b` of table
    /// `k` is the CRC of byte `b` followed by `k` zero bytes.
    private static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
            table[index] = value
        }
        for k in 1..<8 {
            for index in 0..<256 {
                let previous = table[(k - 1) * 256 + index]
                table[k * 256 + index] = previous >> 8 ^ table[Int(previous & 0xFF)]
            }
        }
        return table
    }()

    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { checksum($0) }
    }

    /// The checksum of `bytes[range]`.
    static func checksum(_ bytes: [UInt8], range: Range<Int>) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in checksum(UnsafeBufferPointer(rebasing: buffer[range])) }
    }

    private static func checksum(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        table.withUnsafeBufferPointer { t in
            var crc: UInt32 = 0xFFFF_FFFF
            var i = 0
            let count = bytes.count
            while i + 8 <= count {
                let low = crc ^ (UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24)
                let a = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                let b = t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                let c = t[3 * 256 + Int(bytes[i + 4])] ^ t[2 * 256 + Int(bytes[i + 5])]
                let d = t[256 + Int(bytes[i + 6])] ^ t[Int(bytes[i + 7])]
                crc = a ^ b ^ c ^ d
                i += 8
            }
            while i < count {
                crc = t[Int((crc ^ UInt32(bytes[i])) & 0xFF)] ^ (crc >> 8)
                i += 1
            }
            return crc ^ 0xFFFF_FFFF
        }
    }
}
