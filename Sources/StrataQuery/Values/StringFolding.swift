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
        if foundationOptions == [.caseInsensitive, .diacriticInsensitive], let folded = foldLatin(string) {
            return folded
        }
        return string.folding(options: foundationOptions, locale: nil)
    }

    /// The first scalar past the Latin ranges ``latinFolds`` covers
    /// (Latin-1 Supplement and Latin Extended-A).
    private static let latinLimit: UInt32 = 0x180

    /// Foundation's `[c, d]` folding of each scalar from U+0080 below
    /// ``latinLimit``, computed once. These ranges hold no combining marks
    /// and no scalar whose folding depends on its neighbours (with no
    /// locale), so a string made of them and ASCII folds scalar by scalar.
    private static let latinFolds: [[UInt8]] = (0x80..<latinLimit).map { value in
        guard let scalar = Unicode.Scalar(value) else { return [] }
        return Array(String(Character(scalar)).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).utf8)
    }

    /// `[c, d]` folding of text made of ASCII and the Latin ranges of
    /// ``latinFolds``, without Foundation's per-call cost (most accented
    /// European text); nil for any other text. Works on the UTF-8 bytes:
    /// the scalars below ``latinLimit`` take one or two bytes.
    private static func foldLatin(_ string: String) -> String? {
        // Written straight into the new string's storage: room for the
        // longest folding of every two-byte scalar.
        let capacity = string.utf8.count * latinExpansion
        var folds = true
        let folded = String(unsafeUninitializedCapacity: capacity) { output in
            var count = 0
            var lead: UInt8 = 0
            for byte in string.utf8 {
                if lead != 0 {
                    // The continuation byte of a two-byte scalar.
                    let value = UInt32(lead & 0x1F) << 6 | UInt32(byte & 0x3F)
                    lead = 0
                    guard value >= 0x80, value < latinLimit else { folds = false; return 0 }
                    for folded in latinFolds[Int(value - 0x80)] {
                        output[count] = folded
                        count += 1
                    }
                } else if byte < 0x80 {
                    // ASCII folds by lowercasing, as in the fast path above.
                    output[count] = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
                    count += 1
                } else if byte & 0xE0 == 0xC0 {
                    lead = byte
                } else {
                    folds = false
                    return 0
                }
            }
            guard lead == 0 else { folds = false; return 0 }
            return count
        }
        return folds ? folded : nil
    }

    /// How many bytes of folded text one input byte can become at most:
    /// a two-byte scalar of ``latinFolds`` folds to at most twice as many.
    private static let latinExpansion = max(1, ((latinFolds.map(\.count).max() ?? 2) + 1) / 2)

    /// `canonical:(x)`: case- and diacritic-insensitive form.
    public static func canonical(_ string: String) -> String {
        fold(string, [.caseInsensitive, .diacriticInsensitive])
    }

    private static func isASCII(_ string: String) -> Bool {
        string.utf8.allSatisfy { $0 < 0x80 }
    }
}
