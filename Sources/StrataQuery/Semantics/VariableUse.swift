/// One place a predicate reads a variable: `$NAME` at `range` of its text.
public struct VariableUse: Sendable, Hashable {
    /// The variable's name.
    public var name: String
    /// Where the use is in the predicate's text.
    public var range: SourceRange

    /// Creates a use.
    public init(name: String, range: SourceRange) {
        self.name = name
        self.range = range
    }
}
