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
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return StrataError(failure, "\(what): PostgreSQL: \(message)\(state)")
            }
            return StrataError(failure, "\(what): \(PostgresStoreURL.reason(error))")
        }
        return StrataError(failure, "\(what): \(error)")
    }
}
