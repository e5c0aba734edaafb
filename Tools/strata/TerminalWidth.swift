/// How many cells of a terminal text takes, as `wcwidth` counts them: two
/// for East Asian wide and fullwidth characters and for emoji shown as
/// emoji, none for combining marks and other zero-width characters (Swift
/// already counts a base character and its marks as one `Character`), one
/// for the rest.
enum TerminalWidth {
    /// The width of `text` in cells.
    static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The width of one character (a grapheme cluster).
    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        // An emoji shown as emoji: by default, or asked for with U+FE0F,
        // or a sequence (flags, joined emoji, skin tones).
        if first.properties.isEmojiPresentation
            || (first.properties.isEmoji && scalars.contains { $0.value == 0xFE0F || $0.properties.isEmojiModifier })
            || (scalars.count > 1 && first.properties.isEmoji && scalars.contains { $0.value == 0x200D }) {
            return 2
        }
        if isWide(first.value) { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: return first.value == 0x200B ? 0 : 1
        }
    }

    /// East Asian Wide (W) and Fullwidth (F) ranges of Unicode's
    /// EastAsianWidth.txt, merged.
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF,
             0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
             0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x16FE0...0x16FE4, 0x17000...0x18AFF, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF,
             0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
