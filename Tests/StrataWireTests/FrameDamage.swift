/// Frames damaged one byte at a time, every way: each bit of the byte
/// flipped, the byte set to 0, 0x7F, 0x80 and 0xFF, each of those put
/// before it, and the frame cut there. No generator: every position is
/// covered, and a failure names a variant that is made again the same way.
enum FrameDamage {
    static func variants(of base: [UInt8]) -> [[UInt8]] {
        var variants: [[UInt8]] = []
        variants.reserveCapacity(base.count * 17)
        for at in base.indices {
            for bit in 0..<8 {
                var bytes = base
                bytes[at] ^= 1 << bit
                variants.append(bytes)
            }
            for byte: UInt8 in [0x00, 0x7F, 0x80, 0xFF] {
                var bytes = base
                bytes[at] = byte
                variants.append(bytes)
                var longer = base
                longer.insert(byte, at: at)
                variants.append(longer)
            }
            variants.append(Array(base[..<at]))
        }
        return variants
    }
}
