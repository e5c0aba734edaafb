import ArgumentParser
import StrataClient
import StrataWire

/// Turns any error a command throws into its stderr lines and exit status.
enum ErrorReporter {
    /// Prints `error` to stderr (help and clean exits to stdout), after
    /// `place` (a script's line) when given, and returns the exit status
    /// the process should end with.
    static func report(_ error: any Error, at place: String?) -> Int32 {
        if let place { Console.errorOutput("\(place): ") }
        return report(error)
    }

    /// Prints `error` to stderr (help and clean exits to stdout) and
    /// returns the exit status the process should end with.
    static func report(_ error: any Error) -> Int32 {
        switch error {
        case let error as CLIError:
            Console.error(headline(error.code, error.strataCode, error.message))
            return error.status.rawValue
        case let error as StrataClientError:
            Console.error(headline(error.code, error.strataCode, readable(error)))
            for detail in error.details { Console.error("  \(detail)") }
            // Servers may say the same thing in details and in the structured
            // fields; print each only when it adds something.
            for failure in error.propertyErrors where failure.message != error.message
                && !error.details.contains(where: { $0.contains(failure.message) }) {
                Console.error("  \(failure.strataCode): \(failure.message)")
            }
            for conflict in error.conflicts where !error.details.contains(where: { $0.contains(conflict.objectID) }) {
                let current = conflict.persistedDeleted ? "deleted" : "version \(conflict.currentVersion)"
                Console.error("  conflict: \(conflict.objectID): expected version \(conflict.expectedVersion), store has \(current)")
            }
            return ExitStatus(error).rawValue
        case let error as ExitCode:
            return error.rawValue
        default:
            let code = StrataCommand.exitCode(for: error)
            let message = StrataCommand.fullMessage(for: error)
            if code.isSuccess {
                if !message.isEmpty { Console.output(message + "\n") }
                return ExitStatus.success.rawValue
            }
            if !message.isEmpty { Console.error(message) }
            return ExitStatus.invalidInput.rawValue
        }
    }

    /// The error's message, with the event loop's account of a refused
    /// connection shortened to what it means.
    private static func readable(_ error: StrataClientError) -> String {
        guard error.isConnectionError, error.message.hasPrefix("cannot connect to "),
              let colon = error.message.range(of: ": ", range: error.message.index(error.message.startIndex, offsetBy: 18)..<error.message.endIndex)
        else { return error.message }
        let endpoint = error.message[..<colon.lowerBound]
        if error.message.contains("Connection refused") { return "\(endpoint): connection refused (is strata-server running there?)" }
        if error.message.contains("connectTimeout") || error.message.contains("timed out") { return "\(endpoint): timed out" }
        return error.message
    }

    /// `error: NOT_FOUND (133000): message`.
    private static func headline(_ code: Strata_V1_StatusCode, _ strataCode: Int, _ message: String) -> String {
        let label = Console.stderrStyle.red("error:")
        return "\(label) \(code.name)" + (strataCode != 0 ? " (\(strataCode))" : "") + ": \(message)"
    }
}
