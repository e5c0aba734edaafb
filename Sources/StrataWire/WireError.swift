import StrataModel

/// A protocol-level failure: a frame or message that breaks the wire
/// rules. It carries the gRPC-style status code to answer with and, where
/// it applies, the byte offset in the connection's stream at fault.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The status to answer with.
    public var code: Strata_V1_StatusCode
    /// The Strata error code (``StrataError/Code``), 0 when none.
    public var strataCode: Int
    /// What went wrong, naming the offset, field or limit at fault.
    public var message: String

    /// Creates an error.
    public init(_ code: Strata_V1_StatusCode, _ message: String, strataCode: Int = 0) {
        self.code = code
        self.message = message
        self.strataCode = strataCode
    }

    /// `INVALID_ARGUMENT: message`.
    public var description: String { "\(code): \(message)" }

    /// The status frame body for this error.
    public var status: Strata_V1_Status {
        Strata_V1_Status.with {
            $0.code = code
            $0.strataCode = Int32(clamping: strataCode)
            $0.message = message
        }
    }
}
