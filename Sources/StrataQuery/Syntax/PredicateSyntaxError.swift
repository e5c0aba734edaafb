import StrataModel

/// Why a predicate or expression string was rejected, with the position of
/// the offending token.
///
/// ``PredicateParser/parse(_:)`` throws this as a ``StrataError`` (see
/// ``strataError``); ``PredicateParser/parseDetailed(_:)`` throws it as is,
/// so callers can report the position in structured form.
public struct PredicateSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// The text is not valid predicate syntax; `expected` says what would
        /// have been valid at this point.
        case syntax(expected: String)
        /// The construct is valid NSPredicate syntax that Strata does not
        /// support; `feature` names it (for example `arithmetic expressions`).
        case unsupported(feature: String)
    }

    /// Syntax error or unsupported construct.
    public var kind: Kind
    /// What was found at the position, for example `'AND'`,
    /// `keyword 'IN'` or `end of input`.
    public var found: String
    /// The 1-based line of the offending token.
    public var line: Int
    /// The 1-based column, in characters, of the offending token.
    public var column: Int
    /// The 0-based character offset of the offending token in the whole text.
    public var offset: Int
    /// The number of characters the caret underlines (at least 1).
    public var length: Int
    /// The text of the line holding the offending token, without its line break.
    public var sourceLine: String

    /// Creates an error.
    public init(kind: Kind, found: String, line: Int, column: Int, offset: Int, length: Int, sourceLine: String) {
        self.kind = kind
        self.found = found
        self.line = line
        self.column = column
        self.offset = offset
        self.length = length
        self.sourceLine = sourceLine
    }

    /// What would have been valid, for a syntax error.
    public var expected: String? {
        if case .syntax(let expected) = kind { return expected }
        return nil
    }

    /// Whether this is an unsupported-construct error rather than a syntax error.
    public var isUnsupported: Bool {
        if case .unsupported = kind { return true }
        return false
    }

    /// The first line of the message:
    /// `line 1, column 9: expected expression, found end of input`, or
    /// `arithmetic expressions not supported: '+' at line 1, column 3`.
    public var headline: String {
        switch kind {
        case .syntax(let expected):
            "line \(line), column \(column): expected \(expected), found \(found)"
        case .unsupported(let feature):
            "\(feature) not supported: \(found) at line \(line), column \(column)"
        }
    }

    /// The line under ``sourceLine`` pointing at the offending token with
    /// carets (tabs are repeated so the carets line up).
    public var caretLine: String {
        var prefix = ""
        var index = 0
        for character in sourceLine {
            if index >= column - 1 { break }
            prefix.append(character == "\t" ? "\t" : " ")
            index += 1
        }
        while index < column - 1 {
            prefix.append(" ")
            index += 1
        }
        return prefix + String(repeating: "^", count: max(1, length))
    }

    /// The full message: ``headline``, the source line, and ``caretLine``.
    public var message: String {
        headline + "\n" + sourceLine + "\n" + caretLine
    }

    /// The error as a ``StrataError``: code `.predicateSyntax` for syntax
    /// errors, `.unsupported` for unsupported constructs; the message is
    /// ``message``.
    public var strataError: StrataError {
        StrataError(isUnsupported ? .unsupported : .predicateSyntax, message)
    }

    /// The same as ``message``.
    public var description: String { message }
}
