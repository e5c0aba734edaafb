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
///   why (``problem``), never repeating the URL.
struct StoreOption: ExpressibleByArgument, Sendable {
    var configuration: String
    var type: StoreDescription.StoreType
    var path: String
    var readOnly: Bool
    /// Why a PostgreSQL URL cannot be used (reported by the command's
    /// `validate()`: ArgumentParser's own message for an invalid value
    /// repeats the value, and a URL may hold a password).
    var problem: String?

    init?(argument: String) {
        guard let equals = argument.firstIndex(of: "=") else { return nil }
        configuration = String(argument[..<equals])
        var rest = Substring(argument[argument.index(after: equals)...])
        readOnly = false
        problem = nil
        guard !configuration.isEmpty else { return nil }
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
        guard let type = StoreDescription.StoreType(rawValue: String(typeName)), type != .remote, type != .postgres else { return nil }
        self.type = type
        guard type == .inMemory || !path.isEmpty else { return nil }
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
