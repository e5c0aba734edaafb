import Foundation
import StrataStore

/// Keeps file-system paths out of what clients read: store errors name a
/// store by its absolute path (useful in an embedded program's logs, not
/// to a remote client), and SQLite's own messages may too. Every known
/// store path becomes its file name, and its folder disappears from any
/// longer path, so `"/srv/strata/Books.sqlite-wal"` reads `"Books.sqlite-wal"`.
/// Logs keep the full text.
struct PathRedactor: Sendable {
    /// (text to find, replacement), longest first so that a store's full
    /// path is replaced before its folder.
    private let replacements: [(String, String)]

    /// A redactor for the given stores' files.
    init(paths: [String]) {
        var pairs: [(String, String)] = []
        for path in paths where path.hasPrefix("/") {
            let url = URL(fileURLWithPath: path)
            pairs.append((path, url.lastPathComponent))
            let folder = url.deletingLastPathComponent().path
            if folder != "/" { pairs.append((folder + "/", "")) }
        }
        var seen: Set<String> = []
        replacements = pairs
            .filter { seen.insert($0.0).inserted }
            .sorted { $0.0.count > $1.0.count }
    }

    /// `text` with every known path replaced.
    func redact(_ text: String) -> String {
        guard text.contains("/") else { return text }
        var result = text
        for (path, replacement) in replacements where result.contains(path) {
            result = result.replacingOccurrences(of: path, with: replacement)
        }
        return result
    }

    /// A store's path as a client may see it: its file name.
    func displayPath(_ path: String) -> String {
        path.isEmpty ? "" : URL(fileURLWithPath: path).lastPathComponent
    }
}
