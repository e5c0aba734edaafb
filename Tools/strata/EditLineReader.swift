import CStrataEdit
import Foundation

/// The shell's lines on a terminal, read with libedit (the system's BSD
/// line editor, through its readline interface): cursor movement and
/// editing as in other shells, history kept in a file (Up/Down, Ctrl-R
/// searches it), tab completion of commands, entity and property names
/// (``ShellCompletion``), and characters as wide as the terminal draws
/// them. `~/.editrc` customises it (the program name is `strata`).
struct EditLineReader: LineSource {
    private let historyFile: URL?
    /// History entries kept, in memory and in the file.
    static let historyLimit: Int32 = 1000

    /// A reader whose history lives in `historyFile` (read now, written
    /// after every line; created readable by its owner only).
    init(historyFile: URL?) {
        self.historyFile = historyFile
        // libedit takes the terminal's character set from the locale.
        setlocale(LC_CTYPE, "")
        strata_edit_setup({ text, start, _ in
            strata_edit_completion_over()
            return ShellCompletion.matches(text: text, start: Int(start))
        })
        stifle_history(Self.historyLimit)
        if let historyFile { _ = read_history(historyFile.path) }
    }

    /// The history file: `$STRATA_HISTFILE` (empty: none), else
    /// `~/.strata_history`.
    static var defaultHistoryFile: URL? {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["STRATA_HISTFILE"] {
            return path.isEmpty ? nil : URL(fileURLWithPath: path)
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".strata_history")
    }

    mutating func readLine(prompt: String) -> String? {
        guard let pointer = readline(prompt) else { return nil }
        defer { free(pointer) }
        let line = String(cString: pointer)
        // Completion leaves a space at the end: not part of what is kept.
        let kept = line.trimmingCharacters(in: .whitespaces)
        if !kept.isEmpty, kept != Self.history().last {
            _ = add_history(kept)
            save()
        }
        return line
    }

    /// The history, oldest first.
    static func history() -> [String] {
        let base = strata_edit_history_base()
        return (0..<strata_edit_history_length()).compactMap { offset in
            history_get(base + offset).flatMap { $0.pointee.line }.map { String(cString: $0) }
        }
    }

    /// Writes the history file (the owner's only: it may hold values and IDs).
    private func save() {
        guard let historyFile else { return }
        let path = historyFile.path
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        _ = write_history(path)
    }
}
