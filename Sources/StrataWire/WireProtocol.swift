/// Constants of the Strata wire protocol (see `Protocol/PROTOCOL.md`).
public enum WireProtocol {
    /// The protocol version this build speaks. A peer with another major
    /// version is refused; minor versions only add fields and operations.
    public static let version = Strata_V1_ProtocolVersion.with {
        $0.major = 1
        $0.minor = 4
    }
    /// The port `strata-server` listens on by default.
    public static let defaultPort = 7420
    /// The default limit on a frame's payload, compressed and inflated: 16 MiB.
    public static let defaultMaxFrameBytes = 16 * 1024 * 1024
    /// The limit on a frame's payload, compressed and inflated, until the
    /// connection's hello is accepted: 16 KiB, room for a hello with long
    /// names and tokens, so that unidentified peers hold little memory.
    public static let helloFrameBytes = 16 * 1024
    /// Bytes in a frame header: one flag byte and a 4-byte big-endian length.
    public static let headerSize = 5
    /// Flag bit 0: the payload is zlib-compressed.
    public static let compressedFlag: UInt8 = 0x01
    /// Payloads at least this large are compressed when the peer accepts it.
    public static let compressionThreshold = 1024
    /// Objects or IDs per fetch batch when the request does not say.
    public static let defaultFetchBatchSize = 500
}
