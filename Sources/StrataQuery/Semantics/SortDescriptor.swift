/// How to order fetch results by one key path.
public struct SortDescriptor: Sendable, Hashable {
    /// A key path to an attribute, through to-one relationships (`title`, `author.name`).
    public var keyPath: String
    /// Ascending (nil first) or descending (nil last).
    public var ascending: Bool
    /// Compare strings case-insensitively.
    public var caseInsensitive: Bool

    /// Creates a sort descriptor.
    public init(_ keyPath: String, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }

    /// Parses `key`, `-key` (descending) and `key[c]` / `-key[c]` (case-insensitive),
    /// the form the CLI and wire protocol use.
    public init?(parsing text: String) {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        var ascending = true
        if body.first == "-" { ascending = false; body = body.dropFirst() }
        else if body.first == "+" { body = body.dropFirst() }
        var caseInsensitive = false
        if body.hasSuffix("[c]") { caseInsensitive = true; body = body.dropLast(3) }
        guard !body.isEmpty, body.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }) else { return nil }
        self.init(String(body), ascending: ascending, caseInsensitive: caseInsensitive)
    }
}
