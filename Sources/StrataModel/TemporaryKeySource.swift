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
}
