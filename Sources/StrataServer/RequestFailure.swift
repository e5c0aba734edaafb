import StrataModel
import StrataQuery
import StrataWire

/// Turns any error a request raised into the status sent back.
enum RequestFailure {
    static func status(for error: any Error) -> Strata_V1_Status {
        switch error {
        case let error as StatusError:
            return error.status
        case let error as WireError:
            return error.status
        case let error as StrataError:
            return error.status
        case is CancellationError:
            // Its connection closed: nobody will read this answer.
            return Strata_V1_Status.with {
                $0.code = .cancelled
                $0.message = "cancelled: the connection closed"
            }
        case let error as PredicateSyntaxError:
            var status = error.strataError.status
            status.predicateError = Strata_V1_PredicateErrorPosition.with {
                $0.line = UInt32(clamping: error.line)
                $0.column = UInt32(clamping: error.column)
                $0.excerpt = error.sourceLine + "\n" + error.caretLine
            }
            return status
        default:
            return Strata_V1_Status.with {
                $0.code = .internal
                $0.message = "internal error: \(error)"
            }
        }
    }
}

/// An error already in its wire form.
struct StatusError: Error {
    var status: Strata_V1_Status
}
