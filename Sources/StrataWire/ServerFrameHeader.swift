import NIOCore

/// The top-level fields of a `ServerFrame` that route and count an answer:
/// which request, its status code, whether more frames follow. Read by
/// scanning the protobuf fields and skipping the response body, for a
/// reader that does not need the body (a load generator counting answers
/// should not pay for decoding every object into messages and maps).
public struct ServerFrameHeader: Sendable, Equatable {
    /// `request_id` (field 1); 0 for notifications.
    public var requestID: UInt64 = 0
    /// `status.code` (field 2, its field 1); `.ok` when absent.
    public var code: Strata_V1_StatusCode = .ok
    /// `more_follows` (field 3).
    public var moreFollows = false

    /// Scans a `ServerFrame` payload; nil when it is not a well-formed
    /// protobuf message (a truncated varint or field, a reserved wire type).
    public init?(scanning payload: ByteBuffer) {
        let scanned: ServerFrameHeader? = payload.withUnsafeReadableBytes { bytes in
            var header = ServerFrameHeader()
            var reader = ProtobufReader(bytes: bytes)
            while !reader.isAtEnd {
                guard let key = reader.varint() else { return nil }
                let (field, wireType) = (key >> 3, key & 7)
                switch (field, wireType) {
                case (1, 0):
                    guard let value = reader.varint() else { return nil }
                    header.requestID = value
                case (2, 2):
                    guard let length = reader.varint(), var status = reader.slice(length) else { return nil }
                    while !status.isAtEnd {
                        guard let statusKey = status.varint() else { return nil }
                        if statusKey == (1 << 3) {
                            guard let code = status.varint() else { return nil }
                            header.code = Strata_V1_StatusCode(rawValue: Int(truncatingIfNeeded: code)) ?? .unknown
                        } else if !status.skip(wireType: statusKey & 7) {
                            return nil
                        }
                    }
                case (3, 0):
                    guard let value = reader.varint() else { return nil }
                    header.moreFollows = value != 0
                default:
                    guard reader.skip(wireType: wireType) else { return nil }
                }
            }
            return header
        }
        guard let scanned else { return nil }
        self = scanned
    }

    /// A header with these fields.
    public init(requestID: UInt64 = 0, code: Strata_V1_StatusCode = .ok, moreFollows: Bool = false) {
        self.requestID = requestID
        self.code = code
        self.moreFollows = moreFollows
    }
}
