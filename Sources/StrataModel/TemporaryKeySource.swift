import Foundation
import Synchronization

/// Makes temporary object keys: version-4-shaped UUIDs whose first eight
/// bytes are random once per process and whose last eight count up, so
/// every key is unique within the process (and, with 64 random bits per
/// process, across processes in practice) and cheap to make: `UUID()`
/// opens and reads the system random source on every call.
public enum TemporaryKeySource {
    private static let prefix: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = {
        let random = UUID().uuid
        return (random.0, random.1, random.2, random.3, random.4, random.5, (random.6 & 0x0F) | 0x40, random.7)
    }()
    private static let counter = Atomic<UInt64>(0)

    /// The next key.
    public static func next() -> UUID {
        let n = counter.add(1, ordering: .relaxed).newValue
        let p = prefix
        return UUID(uuid: (
            p.0, p.1, p.2, p.3, p.4, p.5, p.6, p.7,
            UInt8(truncatingIfNeeded: n >> 56) & 0x3F | 0x80, UInt8(truncatingIfNeeded: n >> 48),
            UInt8(truncatingIfNeeded: n >> 40), UInt8(truncatingIfNeeded: n >> 32),
            UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16),
            UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)
        ))
    }

    /// Where a key made by ``next()`` in this process comes in the order
    /// of those calls (keys made later have larger numbers); nil for any
    /// other UUID. Keys with increasing numbers are therefore distinct,
    /// which a save of many inserts checks without hashing them.
    public static func sequenceNumber(of key: UUID) -> UInt64? {
        let u = key.uuid
        let p = prefix
        guard u.0 == p.0, u.1 == p.1, u.2 == p.2, u.3 == p.3, u.4 == p.4, u.5 == p.5, u.6 == p.6, u.7 == p.7,
              u.8 & 0xC0 == 0x80 else { return nil }
        var n = UInt64(u.8 & 0x3F)
        n = n << 8 | UInt64(u.9)
        n = n << 8 | UInt64(u.10)
        n = n << 8 | UInt64(u.11)
        n = n << 8 | UInt64(u.12)
        n = n << 8 | UInt64(u.13)
        n = n << 8 | UInt64(u.14)
        return n << 8 | UInt64(u.15)
    }
}
