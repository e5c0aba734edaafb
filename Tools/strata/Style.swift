import Foundation

/// ANSI styles, applied only when enabled (a terminal, `NO_COLOR` unset,
/// `TERM` not `dumb`); otherwise every method returns its text unchanged.
struct Style: Sendable {
    /// Whether escape sequences are written.
    var enabled: Bool

    /// Whether colour suits the file descriptor.
    static func colourWanted(fileDescriptor: Int32) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        if environment["NO_COLOR"] != nil { return false }
        if environment["TERM"] == "dumb" { return false }
        return isatty(fileDescriptor) == 1
    }

    /// Bold text.
    func bold(_ text: String) -> String { wrap(text, "1") }
    /// Dimmed text.
    func dim(_ text: String) -> String { wrap(text, "2") }
    /// Red text.
    func red(_ text: String) -> String { wrap(text, "31") }
    /// Green text.
    func green(_ text: String) -> String { wrap(text, "32") }
    /// Yellow text.
    func yellow(_ text: String) -> String { wrap(text, "33") }
    /// Cyan text.
    func cyan(_ text: String) -> String { wrap(text, "36") }

    private func wrap(_ text: String, _ code: String) -> String {
        enabled && !text.isEmpty ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
