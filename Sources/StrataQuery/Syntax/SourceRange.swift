/// A span of a predicate or expression string, in `Character` offsets
/// (what a person counts when reading the string).
public struct SourceRange: Sendable, Hashable {
    /// Offset of the first character (0-based).
    public var start: Int
    /// Offset just past the last character.
    public var end: Int

    /// Creates a range.
    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// The range covering both.
    public func union(_ other: SourceRange) -> SourceRange {
        SourceRange(start: min(start, other.start), end: max(end, other.end))
    }
}
