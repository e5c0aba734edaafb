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
