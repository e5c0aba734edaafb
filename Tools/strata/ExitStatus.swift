import StrataClient
import StrataWire

/// The exit statuses of `strata`, the same for every command and shared
/// with `strata-bench` and `strata-server` (docs/cli.md): 0 success, 1
/// invalid input or usage, 2 cannot connect or connection lost, 3 conflict
/// (version or uniqueness), 4 not found, 5 request failed (the server
/// failed it: an internal error, an exhausted resource, an operation it
/// does not have), 6 threshold breached (strata-bench).
enum ExitStatus: Int32, Sendable {
    case success = 0
    case invalidInput = 1
    case connection = 2
    case conflict = 3
    case notFound = 4
    case requestFailed = 5

    /// The status for an error the server sent or the client raised.
    init(_ error: StrataClientError) {
        switch error.code {
        case .unavailable, .cancelled, .deadlineExceeded: self = .connection
        case .aborted, .alreadyExists: self = .conflict
        case .notFound: self = .notFound
        case .internal, .unknown, .dataLoss, .resourceExhausted, .unimplemented: self = .requestFailed
        default: self = .invalidInput
        }
    }
}
