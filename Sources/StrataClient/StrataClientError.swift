import StrataWire

/// A request the server refused, or a connection that failed: the status
/// code (gRPC's), Strata's numeric code, a message and the structured
/// details the server sent.
public struct StrataClientError: Error, Sendable, CustomStringConvertible {
    /// The status code.
    public var code: Strata_V1_StatusCode
    /// Strata's error code (Core Data's number where one exists), 0 when none.
    public var strataCode: Int
    /// What went wrong.
    public var message: String
    /// One line per sub-problem.
    public var details: [String]
    /// Optimistic-locking conflicts (strataCode 133020).
    public var conflicts: [Strata_V1_Conflict]
    /// Validation failures by property.
    public var propertyErrors: [Strata_V1_PropertyError]
    /// Where a predicate failed, when one did.
    public var predicateError: Strata_V1_PredicateErrorPosition?

    /// An error from a status the server sent.
    public init(status: Strata_V1_Status) {
        code = status.code
        strataCode = Int(status.strataCode)
        message = status.message
        details = status.details
        conflicts = status.conflicts
        propertyErrors = status.propertyErrors
        predicateError = status.hasPredicateError ? status.predicateError : nil
    }

    /// A client-side error.
    public init(_ code: Strata_V1_StatusCode, _ message: String) {
        self.code = code
        self.strataCode = 0
        self.message = message
        self.details = []
        self.conflicts = []
        self.propertyErrors = []
        self.predicateError = nil
    }

    /// Whether the connection failed (as opposed to a refused request).
    public var isConnectionError: Bool { code == .unavailable && strataCode == 0 }

    /// `ABORTED (133020): message`, then one line per detail.
    public var description: String {
        var text = "\(code)" + (strataCode != 0 ? " (\(strataCode))" : "") + ": \(message)"
        for detail in details { text += "\n  \(detail)" }
        for error in propertyErrors { text += "\n  \(error.strataCode): \(error.message)" }
        return text
    }
}
