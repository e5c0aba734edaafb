import StrataClient
import StrataWire

/// A failure `strata` reports itself (bad input, a missing object): the
/// exit status, the Strata code it corresponds to, and a message.
///
/// Server and connection failures travel as `StrataClientError`; both are
/// printed by ``ErrorReporter`` as `error: CODE (strata code): message`.
struct CLIError: Error, Sendable {
    /// The process exit status this failure ends with.
    var status: ExitStatus
    /// The wire status code the failure corresponds to.
    var code: Strata_V1_StatusCode
    /// Strata's error code, 0 when none.
    var strataCode: Int
    /// What went wrong, for people.
    var message: String

    /// Strata's "invalid value, ID, name or field" code.
    static let invalidValueCode = 140104
    /// Strata's "object no longer exists" code.
    static let objectNotFoundCode = 133000

    /// Invalid input detected before anything was sent (exit 1).
    static func invalid(_ message: String) -> CLIError {
        CLIError(status: .invalidInput, code: .invalidArgument, strataCode: invalidValueCode, message: message)
    }

    /// A usage mistake (exit 1, no Strata code).
    static func usage(_ message: String) -> CLIError {
        CLIError(status: .invalidInput, code: .invalidArgument, strataCode: 0, message: message)
    }

    /// An object that does not exist (exit 4).
    static func notFound(_ message: String) -> CLIError {
        CLIError(status: .notFound, code: .notFound, strataCode: objectNotFoundCode, message: message)
    }
}
