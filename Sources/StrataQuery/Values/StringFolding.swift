import Foundation

/// Case and diacritic folding shared by the in-memory evaluator, the SQL
/// functions registered on SQLite connections, `canonical:` derivations and
/// case-insensitive sorting, so that every path folds identically.
public enum StringFolding {
    /// Folds `string` as `[c]`, `[d]` or `[cd]` ask; returns it unchanged for no options.
    public static func fold(_ string: String, _ options: StringComparisonOptions) -> String {
        if options.isEmpty { return string }
        var foundationOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foundationOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foundationOptions.insert(.diacriticInsensitive) }
        if isASCII(string) {
            // Fast path: ASCII has no diacritics and folds case by lowercasing.
            return options.contains(.caseInsensitive) ? string.lowercased() : string
        }
        return string.folding(options: foundationOptions, locale: nil)
    }

    /// `canonical:(x)`: case- and diacritic-insensitive form.
    public static func canonical(_ string: String) -> String {
        fold(string, [.caseInsensitive, .diacriticInsensitive])
    }

    private static func isASCII(_ string: String) -> Bool {
        string.utf8.allSatisfy { $0 < 0x80 }
    }
}
