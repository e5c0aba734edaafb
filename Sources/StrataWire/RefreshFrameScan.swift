import NIOCore
import StrataModel

/// A `ClientFrame` carrying a `RefreshRequest`, read by its fields without
/// building messages: what a server answering gets on its event loop needs
/// (`Protocol/strata.proto`: `ClientFrame.request_id` 1, `.refresh` 15;
/// `RefreshRequest.ids` 1, `include_fetched` 2, `include_relationships` 3,
/// `skip_fetched` 4).
///
/// The scan answers only the plain case and says nil otherwise: any other
/// top-level field, a refresh given twice (protobuf would merge them), an
/// ID or a name that is not UTF-8, a tag the decoder refuses, or malformed
/// bytes. A reader then decodes the
/// frame in full, which decides what such a frame means.
public struct RefreshFrameScan: Sendable, Equatable {
    /// `request_id`.
    public var requestID: UInt64 = 0
    /// `ids`, in order.
    public var ids: [String] = []
    /// Whether `include_fetched` names any property.
    public var namesFetched = false
    /// Whether `include_relationships` names any relationship.
    public var namesRelationships = false
    /// `skip_fetched`.
    public var skipFetched = false

    /// Scans a `ClientFrame` payload; nil when it is not a plain refresh.
    public init?(scanning payload: ByteBuffer) {
        let scanned: RefreshFrameScan? = payload.withUnsafeReadableBytes { bytes in
            var ids: [String] = []
            guard var scan = Self.scan(bytes, id: { raw in
                guard let id = ProtobufReader.text(raw) else { return false }
                ids.append(id)
                return true
            }) else { return nil }
            scan.ids = ids
            return scan
        }
        guard let scanned else { return nil }
        self = scanned
    }

    /// ``init(scanning:)`` for a refresh of exactly one ID (the common get),
    /// without making the ID a string: its bytes go to `read` (valid during
    /// the call, and not checked for UTF-8: `read` must answer nil for
    /// anything it does not recognize), and the scan comes back with `ids`
    /// empty beside what `read` answered. Nil when the frame is not a plain
    /// refresh of one ID, or `read` answers nil: ``init(scanning:)`` then
    /// reads the frame as usual.
    ///
    /// Not generic over what `read` answers: a generic function of this
    /// module would be called unspecialized from others, and would look up
    /// the metadata of its result's type (under a lock) on every frame.
    public static func scanningSoleID(_ payload: ByteBuffer, _ read: (UnsafeRawBufferPointer) -> ObjectID?) -> (scan: RefreshFrameScan, id: ObjectID)? {
        payload.withUnsafeReadableBytes { bytes in
            var sole: UnsafeRawBufferPointer?
            var count = 0
            guard let scan = Self.scan(bytes, id: { raw in
                count += 1
                sole = raw
                return count == 1
            }), count == 1, let sole, let id = read(sole) else { return nil }
            return (scan, id)
        }
    }

    /// The fields of the `ClientFrame` in `bytes`, each ID's bytes handed
    /// to `id` (false ends the scan: nil); nil when it is not a plain refresh.
    private static func scan(_ bytes: UnsafeRawBufferPointer, id: (UnsafeRawBufferPointer) -> Bool) -> RefreshFrameScan? {
        var scan = RefreshFrameScan()
        var reader = ProtobufReader(bytes: bytes)
        var sawRefresh = false
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return nil }
            switch key {
            case 1 << 3:
                guard let value = reader.varint() else { return nil }
                scan.requestID = value
            case (15 << 3) | 2:
                guard !sawRefresh, let length = reader.varint(), var refresh = reader.slice(length) else { return nil }
                sawRefresh = true
                guard scan.readRefresh(&refresh, id: id) else { return nil }
            default:
                return nil
            }
        }
        return sawRefresh ? scan : nil
    }

    /// A scan with these fields (for tests).
    public init(requestID: UInt64, ids: [String], namesFetched: Bool = false, namesRelationships: Bool = false, skipFetched: Bool = false) {
        self.requestID = requestID
        self.ids = ids
        self.namesFetched = namesFetched
        self.namesRelationships = namesRelationships
        self.skipFetched = skipFetched
    }

    private init() {}

    private mutating func readRefresh(_ reader: inout ProtobufReader, id: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return false }
            switch key {
            case (1 << 3) | 2:
                guard let field = reader.delimited(), id(field.remaining) else { return false }
            case (2 << 3) | 2, (3 << 3) | 2:
                // Names the decoder refuses (not UTF-8) make the frame a
                // protocol error: left to it.
                guard reader.text() != nil else { return false }
                if key >> 3 == 2 { namesFetched = true } else { namesRelationships = true }
            case 4 << 3:
                guard let value = reader.varint() else { return false }
                skipFetched = value != 0
            default:
                // Fields this version does not know are skipped, as a decoder
                // would; a tag past 32 bits is one it refuses.
                guard key >> 3 > 4, key < UInt64(UInt32.max), reader.skip(wireType: key & 7) else { return false }
            }
        }
        return true
    }
}
