import Foundation

/// Random (version 4) UUIDs for the inserted objects, from a generator
/// seeded once from the system: Foundation's `UUID()` opens, reads and
/// closes `/dev/urandom` for each UUID on Linux (three system calls,
/// about a sixteenth of the load generator's time per insert), which a
/// load generator should not spend while it measures a server.
///
/// One source per connection or worker (no locking). Each UUID is two
/// outputs of a SplitMix64 generator, whose outputs never repeat within
/// 2^64 draws; sources are seeded independently from the system's random
/// number generator, so UUIDs differ between connections and runs (the
/// Book's `uuid` is unique) with the odds of random UUIDs.
struct UUIDSource {
    private var generator: SplitMix64

    /// A source seeded from the system's random number generator.
    init() {
        var system = SystemRandomNumberGenerator()
        generator = SplitMix64(seed: system.next())
    }

    /// The next UUID: 122 random bits, with the version (4) and variant
    /// (RFC 9562) bits set.
    mutating func next() -> UUID {
        let high = (generator.next() & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let low = (generator.next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let h = high.bigEndian, l = low.bigEndian
        return withUnsafeBytes(of: (h, l)) { bytes in
            UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                        bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        }
    }
}
