/// Reads standard input line by line, for scripts that pipe commands in;
/// writes the prompt (to stderr, keeping stdout parseable) only when asked.
struct PlainLineReader: LineSource {
    /// Whether to show a prompt.
    var showsPrompt: Bool

    mutating func readLine(prompt: String) -> String? {
        if showsPrompt { Console.errorOutput(prompt) }
        return Swift.readLine(strippingNewline: true)
    }
}
