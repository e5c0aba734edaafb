import ArgumentParser
import Foundation
import StrataPostgres
import StrataStore

/// `--store CONFIG=TYPE:LOCATION`: which store serves a configuration.
///
/// - `sqlite:PATH`, `binary:PATH`, `memory`; a file store is read-only
///   with `?readonly` after its path.
/// - `postgres:postgresql://USER@HOST[:PORT]/DB[?schema=…&pool=…]` (see
///   ``PostgresStoreURL``); read-only as `postgres+readonly:URL`, so
///   that nothing is added to the URL's own query. The URL is checked
///   here: one that ``PostgresStoreURL`` refuses is a usage error saying
///   why (``problem``).
///
/// A value that cannot be used is a usage error that never repeats the
/// value (a mistyped prefix can leave a password in it).
struct StoreOption: ExpressibleByArgument, Sendable {
    var configuration: String
    var type: StoreDescription.StoreType
    var path: String
    var readOnly: Bool
    /// Why the value cannot be used, reported by the command's
    /// `validate()` (never repeating the value: ArgumentParser's own
    /// message for an invalid value would, and a URL may hold a password).
    var problem: String?

    /// The option's usage, for messages.
    static let usage = "expected CONFIG=TYPE:PATH[?readonly] with TYPE sqlite, binary or memory, or CONFIG=postgres:URL / CONFIG=postgres+readonly:URL"

    /// Parses `argument`; never fails: a value that cannot be used keeps
    /// the reason in ``problem``.
    init?(argument: String) {
        configuration = ""
        type = .inMemory
        path = ""
        readOnly = false
        problem = nil
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
            problem = Self.usage
            return
        }
        configuration = String(argument[..<equals])
        var rest = Substring(argument[argument.index(after: equals)...])
        for (prefix, isReadOnly) in [("postgres:", false), ("postgres+readonly:", true)] where rest.hasPrefix(prefix) {
            // The URL is kept whole: its query is its own.
            type = .postgres
            path = String(rest.dropFirst(prefix.count))
            readOnly = isReadOnly
            do {
                _ = try PostgresStoreURL(path)
                if URL(string: path) == nil { problem = "the PostgreSQL URL is not a URL" }
            } catch {
                problem = error.message
            }
            return
        }
        if rest.hasSuffix("?readonly") {
            readOnly = true
            rest = rest.dropLast("?readonly".count)
        }
        let typeName: Substring
        if let colon = rest.firstIndex(of: ":") {
            typeName = rest[..<colon]
            path = String(rest[rest.index(after: colon)...])
        } else {
            typeName = rest
            path = ""
        }
        guard let type = StoreDescription.StoreType(rawValue: String(typeName)), type != .remote, type != .postgres else {
            problem = Self.usage
            return
        }
        self.type = type
        if type != .inMemory && path.isEmpty { problem = "a \(type.rawValue) store needs a path (\(Self.usage))" }
    }

    /// The store's name in messages: `CONFIG=TYPE` (never the location).
    var label: String {
        configuration.isEmpty ? "" : "\(configuration)=\(type == .postgres && readOnly ? "postgres+readonly" : type.rawValue)"
    }

    static var defaultCompletionKind: CompletionKind { .default }

    /// The description, with relative paths under `dataDirectory`.
    func description(in dataDirectory: URL) -> StoreDescription {
        let url: URL?
        switch type {
        case .inMemory: url = nil
        case .postgres: url = URL(string: path)
        default: url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : dataDirectory.appendingPathComponent(path)
        }
        return StoreDescription(url: url, type: type, configuration: configuration == "default" ? nil : configuration, isReadOnly: readOnly)
    }
}
