import ArgumentParser
import Foundation
import StrataStore

/// `--store CONFIG=TYPE:PATH[?readonly]`: which store serves a configuration.
struct StoreOption: ExpressibleByArgument, Sendable {
    var configuration: String
    var type: StoreDescription.StoreType
    var path: String
    var readOnly: Bool

    init?(argument: String) {
        guard let equals = argument.firstIndex(of: "=") else { return nil }
        configuration = String(argument[..<equals])
        var rest = Substring(argument[argument.index(after: equals)...])
        readOnly = false
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
        guard !configuration.isEmpty, let type = StoreDescription.StoreType(rawValue: String(typeName)) else { return nil }
        self.type = type
        guard type == .inMemory || !path.isEmpty else { return nil }
    }

    static var defaultCompletionKind: CompletionKind { .default }

    /// The description, with relative paths under `dataDirectory`.
    func description(in dataDirectory: URL) -> StoreDescription {
        let url: URL? = type == .inMemory ? nil : (path.hasPrefix("/") ? URL(fileURLWithPath: path) : dataDirectory.appendingPathComponent(path))
        return StoreDescription(url: url, type: type, configuration: configuration == "default" ? nil : configuration, isReadOnly: readOnly)
    }
}
