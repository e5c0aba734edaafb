import StrataClient
import StrataWire

/// The exit statuses of `strata`, the same for every command:
/// 0 success, 1 invalid input or usage, 2 cannot connect or connection
/// lost, 3 conflict (version or uniqueness), 4 not found.
enum ExitStatus: Int32, Sendable {
    case success = 0
    case invalidInput = 1
    case connection = 2
    case conflict = 3
    case notFound = 4

    /// The status for an error the server sent or the client raised.
    init(_ error: StrataClientError) {
        switch error.code {
        case .unavailable, .cancelled, .deadlineExceeded: self = .connection
        case .aborted, .alreadyExists: self = .conflict
        case .notFound: self = .notFound
        default: self = .invalidInput
        }
    }
}

extension Strata_V1_StatusCode {
    /// The code as the protocol spells it (`NOT_FOUND`, `ABORTED`, …).
    var protocolName: String {
        switch self {
        case .ok: "OK"
        case .cancelled: "CANCELLED"
        case .unknown: "UNKNOWN"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .deadlineExceeded: "DEADLINE_EXCEEDED"
        case .notFound: "NOT_FOUND"
        case .alreadyExists: "ALREADY_EXISTS"
        case .permissionDenied: "PERMISSION_DENIED"
        case .resourceExhausted: "RESOURCE_EXHAUSTED"
        case .failedPrecondition: "FAILED_PRECONDITION"
        case .aborted: "ABORTED"
        case .outOfRange: "OUT_OF_RANGE"
        case .unimplemented: "UNIMPLEMENTED"
        case .internal: "INTERNAL"
        case .unavailable: "UNAVAILABLE"
        case .dataLoss: "DATA_LOSS"
        case .unauthenticated: "UNAUTHENTICATED"
        case .UNRECOGNIZED(let value): "STATUS_\(value)"
        }
    }
}
