/// Why a benchmark could not run.
enum BenchError: Error, CustomStringConvertible {
    /// Bad options.
    case usage(String)
    /// The server could not be reached or refused the setup.
    case setup(String)

    var description: String {
        switch self {
        case .usage(let message), .setup(let message): message
        }
    }
}
