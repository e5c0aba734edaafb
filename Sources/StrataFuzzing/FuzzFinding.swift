/// An invariant a fuzz input broke: what the target expected and what it
/// got. The fuzz drivers crash on it (so libFuzzer keeps the input); the
/// corpus replay tests report it.
public struct FuzzFinding: Error, CustomStringConvertible, Sendable {
    /// The target that found it.
    public var target: FuzzTarget
    /// What went wrong.
    public var message: String

    /// A finding of `target`.
    public init(_ target: FuzzTarget, _ message: String) {
        self.target = target
        self.message = message
    }

    /// The target and the message.
    public var description: String { "\(target.rawValue): \(message)" }
}
