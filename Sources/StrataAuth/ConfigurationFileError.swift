/// Why a security configuration file (an auth file, a JWT key, a TLS
/// certificate or key) could not be loaded: names the file and, where
/// there is one, the entry at fault. Never holds a token or a secret.
public struct ConfigurationFileError: Error, Sendable, CustomStringConvertible {
    /// The file at fault.
    public var file: String
    /// What is wrong, and where in the file.
    public var message: String

    /// Creates an error about `file`.
    public init(file: String, _ message: String) {
        self.file = file
        self.message = message
    }

    /// `file: message`.
    public var description: String { "\(file): \(message)" }
}
