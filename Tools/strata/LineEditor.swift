import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small line editor for the shell on a terminal (termios raw mode, no
/// library needed): cursor movement (arrows, Home/End, Ctrl-A/E/B/F),
/// deletion (Backspace, Delete, Ctrl-D/K/U/W), history (Up/Down,
/// Ctrl-P/N) kept in a file, Ctrl-C to drop the line, Ctrl-D on an empty
/// line to end, Ctrl-L to clear the screen.
///
/// Raw mode lasts only while a line is read, so commands run with the
/// terminal as usual (Ctrl-C interrupts them). Characters are taken to be
/// one column wide, and a line longer than the terminal is redrawn less
/// neatly.
struct LineEditor: LineSource {
    private var history: [String] = []
    private let historyFile: URL?
    private let historyLimit = 1000

    /// An editor whose history lives in `historyFile` (read now, appended to per line).
    init(historyFile: URL?) {
        self.historyFile = historyFile
        if let historyFile, let text = try? String(contentsOf: historyFile, encoding: .utf8) {
            history = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            if history.count > historyLimit {
                history.removeFirst(history.count - historyLimit)
                try? Data((history.joined(separator: "\n") + "\n").utf8).write(to: historyFile)
            }
        }
    }

    /// `~/.strata_history`.
    static var defaultHistoryFile: URL? {
        guard let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".strata_history")
    }

    mutating func readLine(prompt: String) -> String? {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else {
            Console.output(prompt)
            return Swift.readLine(strippingNewline: true)
        }
        var raw = original
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0 else {
            Console.output(prompt)
            return Swift.readLine(strippingNewline: true)
        }
        defer { _ = tcsetattr(STDIN_FILENO, TCSADRAIN, &original) }
        let line = edit(prompt: prompt)
        if let line, !line.trimmingCharacters(in: .whitespaces).isEmpty, line != history.last {
            remember(line)
        }
        return line
    }

    /// The editing loop, in raw mode.
    private func edit(prompt: String) -> String? {
        var buffer: [Character] = []
        var cursor = 0
        var historyIndex = history.count
        var draft: [Character] = []

        func redraw() {
            var text = "\r" + prompt + String(buffer) + "\u{1B}[K"
            if cursor < buffer.count { text += "\u{1B}[\(buffer.count - cursor)D" }
            Console.output(text)
        }
        func recall(_ index: Int) {
            if historyIndex == history.count { draft = buffer }
            historyIndex = index
            buffer = index == history.count ? draft : Array(history[index])
            cursor = buffer.count
        }

        redraw()
        while let byte = readByte() {
            switch byte {
            case 13, 10:
                Console.output("\r\n")
                return String(buffer)
            case 3: // Ctrl-C: drop the line.
                Console.output("^C\r\n")
                buffer = []
                cursor = 0
                historyIndex = history.count
            case 4: // Ctrl-D: end on an empty line, else delete.
                if buffer.isEmpty {
                    Console.output("\r\n")
                    return nil
                }
                if cursor < buffer.count { buffer.remove(at: cursor) }
            case 127, 8:
                if cursor > 0 {
                    buffer.remove(at: cursor - 1)
                    cursor -= 1
                }
            case 1: cursor = 0
            case 5: cursor = buffer.count
            case 2: cursor = max(0, cursor - 1)
            case 6: cursor = min(buffer.count, cursor + 1)
            case 11: buffer.removeSubrange(cursor...)
            case 21:
                buffer.removeSubrange(..<cursor)
                cursor = 0
            case 23: // Ctrl-W: delete the word before the cursor.
                var start = cursor
                while start > 0, buffer[start - 1] == " " { start -= 1 }
                while start > 0, buffer[start - 1] != " " { start -= 1 }
                buffer.removeSubrange(start..<cursor)
                cursor = start
            case 12: Console.output("\u{1B}[H\u{1B}[2J")
            case 16: if historyIndex > 0 { recall(historyIndex - 1) }
            case 14: if historyIndex < history.count { recall(historyIndex + 1) }
            case 27:
                switch readEscape() {
                case "A": if historyIndex > 0 { recall(historyIndex - 1) }
                case "B": if historyIndex < history.count { recall(historyIndex + 1) }
                case "C": cursor = min(buffer.count, cursor + 1)
                case "D": cursor = max(0, cursor - 1)
                case "H", "1~", "7~": cursor = 0
                case "F", "4~", "8~": cursor = buffer.count
                case "3~": if cursor < buffer.count { buffer.remove(at: cursor) }
                default: break
                }
            case 0..<32:
                break
            default:
                if let character = readCharacter(startingWith: byte) {
                    buffer.insert(character, at: cursor)
                    cursor += 1
                }
            }
            redraw()
        }
        return buffer.isEmpty ? nil : String(buffer)
    }

    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count == 1 { return byte }
            if count < 0, errno == EINTR { continue }
            return nil
        }
    }

    /// The rest of an escape sequence after ESC: `A`, `3~`, … ("" if unknown).
    private func readEscape() -> String {
        guard let introducer = readByte(), introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else { return "" }
        var sequence = ""
        while let byte = readByte() {
            sequence.unicodeScalars.append(Unicode.Scalar(byte))
            if (byte >= 0x40 && byte <= 0x7E) || sequence.count > 8 { break }
        }
        return sequence
    }

    /// One UTF-8 character whose first byte is `first`.
    private func readCharacter(startingWith first: UInt8) -> Character? {
        var bytes = [first]
        let length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1
        while bytes.count < length, let next = readByte() { bytes.append(next) }
        return String(decoding: bytes, as: UTF8.self).first
    }

    private mutating func remember(_ line: String) {
        history.append(line)
        if history.count > historyLimit { history.removeFirst() }
        guard let historyFile else { return }
        let data = Data((line + "\n").utf8)
        if let handle = try? FileHandle(forWritingTo: historyFile) {
            _ = try? handle.seekToEnd()
            try? handle.write(contentsOf: data)
            try? handle.close()
        } else {
            // The history may hold values and IDs: the owner's only.
            _ = FileManager.default.createFile(atPath: historyFile.path, contents: data, attributes: [.posixPermissions: 0o600])
        }
    }
}
