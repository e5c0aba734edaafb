/// The version of the Strata software (the package's release version) and
/// of the wire protocol it speaks, as `--version`, the hello and Stats
/// report them.
public enum StrataVersion {
    /// The software's version (semantic versioning).
    public static let software = "0.9.0"

    /// The protocol version as `major.minor`.
    public static var wireProtocol: String { "\(WireProtocol.version.major).\(WireProtocol.version.minor)" }

    /// `0.9.0 (protocol 1.4)`, as `--version` prints it.
    public static var description: String { "\(software) (protocol \(wireProtocol))" }
}
