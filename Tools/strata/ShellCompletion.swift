import CStrataEdit
import Foundation
import Synchronization

/// What Tab completes in the shell: the first word among the commands,
/// the word after a command that names an entity among the served model's
/// entities, and later words among that entity's properties (followed by
/// `=` for `insert` and `update`). libedit calls ``matches(text:start:)``
/// from C, so the words live in a lock, set by the shell once it has the
/// model.
enum ShellCompletion {
    /// The words completion draws from.
    struct Words: Sendable {
        var commands: [String] = []
        var entities: [String] = []
        /// Property names by entity.
        var properties: [String: [String]] = [:]
    }

    static let words = Mutex(Words())

    /// Commands whose first argument is an entity.
    static let entityCommands: Set<String> = ["fetch", "count", "insert", "watch", "export", "import"]

    /// The candidates for the word `text` that starts at `start` in the
    /// line being edited.
    static func candidates(line: String, text: String, start: Int) -> [String] {
        let before = String(decoding: Array(line.utf8.prefix(max(0, start))), as: UTF8.self)
        let previous = before.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let words = Self.words.withLock { $0 }
        var pool: [String]
        switch previous.count {
        case 0:
            pool = words.commands
        case 1 where entityCommands.contains(previous[0]):
            pool = words.entities
        default:
            guard previous.count >= 2, entityCommands.contains(previous[0]) || previous[0] == "update" else { return [] }
            let entity = previous[0] == "update" ? entityName(inID: previous[1]) : previous[1]
            let suffix = ["insert", "update"].contains(previous[0]) ? "=" : ""
            pool = (entity.flatMap { words.properties[$0] } ?? []).map { $0 + suffix }
        }
        return pool.filter { $0.hasPrefix(text) }.sorted()
    }

    /// The entity in `strata://STORE/Entity/pN`.
    private static func entityName(inID id: String) -> String? {
        let parts = id.split(separator: "/")
        return parts.count >= 4 ? String(parts[parts.count - 2]) : nil
    }

    /// libedit's form of the candidates: a malloc'd, NULL-terminated array
    /// whose first entry is what replaces `text` (the candidates' common
    /// prefix), then the candidates; nil for none.
    static func matches(text: UnsafePointer<CChar>?, start: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        let word = text.map { String(cString: $0) } ?? ""
        let line = strata_edit_line_text()
        let found = candidates(line: line, text: word, start: start)
        guard !found.isEmpty else { return nil }
        // `title=` is followed by its value, not a space.
        strata_edit_append_character(found.count == 1 && found[0].hasSuffix("=") ? 0 : 32)
        var common = found[0]
        for candidate in found.dropFirst() {
            while !candidate.hasPrefix(common) { common.removeLast() }
        }
        let entries = (found.count == 1 ? [found[0]] : [common] + found)
        guard let array = calloc(entries.count + 1, MemoryLayout<UnsafeMutablePointer<CChar>?>.stride)?
            .assumingMemoryBound(to: UnsafeMutablePointer<CChar>?.self) else { return nil }
        for (index, entry) in entries.enumerated() { array[index] = strdup(entry) }
        return array
    }

    /// The line libedit is editing.
    private static func strata_edit_line_text() -> String {
        strata_edit_line().map { String(cString: $0) } ?? ""
    }

    /// The words for `model`: the shell's commands, its entities, and each
    /// entity's settable properties (persisted attributes and
    /// relationships).
    static func words(commands: [String], model: ServedModel) -> Words {
        var words = Words(commands: commands.sorted())
        for entity in model.response.entities {
            words.entities.append(entity.name)
            words.properties[entity.name] = entity.attributes.filter { !$0.transient && $0.derivation.isEmpty }.map(\.name)
                + entity.relationships.filter { !$0.transient }.map(\.name)
        }
        words.entities.sort()
        return words
    }
}
