/// Where the shell's lines come from: the line editor on a terminal, plain
/// line-by-line reading otherwise.
protocol LineSource {
    /// The next line without its newline, or nil at end of input.
    mutating func readLine(prompt: String) -> String?
}
