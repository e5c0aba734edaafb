import Foundation

/// Reads standard input (or a file) line by line, for scripts that pipe
/// commands in; writes the prompt (to stderr, keeping stdout parseable)
/// only when asked.
struct PlainLineReader: LineSource {
    /// Whether to show a prompt.
    var showsPrompt: Bool
    /// A file to read instead of standard input.
    var input: FileHandle?
    private var buffer: [UInt8] = []
    private var finished = false

    init(showsPrompt: Bool, input: FileHandle? = nil) {
        self.showsPrompt = showsPrompt
        self.input = input
    }

    mutating func readLine(prompt: String) -> String? {
        if showsPrompt { Console.errorOutput(prompt) }
        guard let input else { return Swift.readLine(strippingNewline: true) }
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            if finished {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            let chunk = (try? input.read(upToCount: 1 << 16)) ?? nil
            if let chunk, !chunk.isEmpty { buffer += chunk } else { finished = true }
        }
    }
}
