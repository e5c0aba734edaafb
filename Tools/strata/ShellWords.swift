/// Splits a shell line into words the way a POSIX shell would, minus
/// expansions: whitespace separates words; 'single quotes' keep everything;
/// "double quotes" keep everything but `\"` and `\\`; a backslash outside
/// quotes escapes the next character; `#` at the start of a word begins a
/// comment.
enum ShellWords {
    /// The words of `line`, or a usage error for an unterminated quote.
    static func split(_ line: String) throws(CLIError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var iterator = line.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\r", "\n":
                if inWord { words.append(current) }
                current = ""
                inWord = false
            case "#" where !inWord:
                return words
            case "'":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "'" { closed = true; break }
                    current.append(next)
                }
                guard closed else { throw .usage("unterminated ' quote") }
            case "\"":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" { closed = true; break }
                    if next == "\\" {
                        guard let escaped = iterator.next() else { break }
                        if escaped != "\"" && escaped != "\\" { current.append("\\") }
                        current.append(escaped)
                    } else {
                        current.append(next)
                    }
                }
                guard closed else { throw .usage("unterminated \" quote") }
            case "\\":
                inWord = true
                if let escaped = iterator.next() { current.append(escaped) }
            default:
                inWord = true
                current.append(character)
            }
        }
        if inWord { words.append(current) }
        return words
    }
}
