import PostgresNIO
import StrataModel

/// PostgreSQL's errors as Strata's: the server's message and SQLSTATE, never
/// the statement (whose text and values stay out of answers and logs).
package enum PostgresErrors {
    /// `error` as a ``StrataError``: a Strata error as it is (also when a
    /// transaction wrapped it), anything else as `failure` saying what was
    /// being done.
    package static func strataError(_ error: any Error, failure: StrataError.Code, doing what: String) -> StrataError {
        if let error = error as? StrataError { return error }
        if let transaction = error as? PostgresTransactionError {
            if let inner = transaction.closureError ?? transaction.beginError ?? transaction.commitError {
                return strataError(inner, failure: failure, doing: what)
            }
        }
        return StrataError(failure, "\(what): \(reason(error))")
    }

    /// Why an operation failed, in words: the server's message and
    /// SQLSTATE, or the connection's error and its cause (refused, TLS
    /// verification…).
    package static func reason(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] {
            return "PostgreSQL: " + message + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }
}
