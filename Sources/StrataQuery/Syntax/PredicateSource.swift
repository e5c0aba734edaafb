/// The text being lexed and parsed, kept in the forms the lexer, the parser
/// and the error reporter need: Unicode scalars to scan, and a map from
/// scalar positions to `Character` offsets (what ``SourceRange`` counts).
struct PredicateSource: Sendable {
    /// The original text.
    let text: String
    /// The text's Unicode scalars; the lexer scans these.
    let scalars: [Unicode.Scalar]
    /// The text's UTF-8 bytes, to make token texts from.
    private let utf8: [UInt8]
    /// For each scalar index (and one past the end), the offset of its
    /// first UTF-8 byte; nil for ASCII text, where the offsets are the same.
    private let utf8Index: [Int]?
    /// For each scalar index (and one past the end), the offset of the
    /// character that contains it; nil when every scalar is a character
    /// (ASCII text without CR LF), where the offsets are the same.
    private let characterIndex: [Int]?
    /// For each scalar index (and one past the end), whether the scalar
    /// begins a character; nil with `characterIndex`.
    private let beginsCharacter: [Bool]?

    /// Prepares `text` for scanning.
    init(_ text: String) {
        self.text = text
        self.scalars = Array(text.unicodeScalars)
        self.utf8 = Array(text.utf8)
        if utf8.allSatisfy({ $0 < 0x80 }) {
            utf8Index = nil
        } else {
            var utf8Index: [Int] = []
            utf8Index.reserveCapacity(scalars.count + 1)
            var offset = 0
            for scalar in scalars {
                utf8Index.append(offset)
                offset += UTF8.width(scalar)
            }
            utf8Index.append(offset)
            self.utf8Index = utf8Index
        }
        if utf8Index == nil, !utf8.contains(0x0D) {
            // ASCII without CR LF: every scalar is a character.
            characterIndex = nil
            beginsCharacter = nil
            return
        }
        var characterIndex: [Int] = []
        var beginsCharacter: [Bool] = []
        characterIndex.reserveCapacity(scalars.count + 1)
        beginsCharacter.reserveCapacity(scalars.count + 1)
        var offset = 0
        for character in text {
            var first = true
            for _ in character.unicodeScalars {
                characterIndex.append(offset)
                beginsCharacter.append(first)
                first = false
            }
            offset += 1
        }
        characterIndex.append(offset)
        beginsCharacter.append(true)
        self.characterIndex = characterIndex
        self.beginsCharacter = beginsCharacter
    }

    /// The number of scalars.
    var count: Int { scalars.count }

    /// The scalar at `index`, or nil past the end.
    func scalar(at index: Int) -> Unicode.Scalar? {
        index >= 0 && index < scalars.count ? scalars[index] : nil
    }

    /// The character offset at which a token starting at scalar `index` starts.
    func characterOffset(ofScalar index: Int) -> Int {
        let clamped = max(0, min(index, scalars.count))
        return characterIndex?[clamped] ?? clamped
    }

    /// The character offset just past a token ending (exclusively) at scalar
    /// `index`; a token ending inside a character covers all of it.
    func characterEnd(ofScalar index: Int) -> Int {
        let clamped = max(0, min(index, scalars.count))
        guard let characterIndex, let beginsCharacter else { return clamped }
        return beginsCharacter[clamped] ? characterIndex[clamped] : characterIndex[clamped] + 1
    }

    /// The character range of a scalar range.
    func range(of scalarRange: Range<Int>) -> SourceRange {
        let start = characterOffset(ofScalar: scalarRange.lowerBound)
        return SourceRange(start: start, end: max(start, characterEnd(ofScalar: scalarRange.upperBound)))
    }

    /// The text of a scalar range.
    func text(of scalarRange: Range<Int>) -> String {
        let lower = max(0, min(scalarRange.lowerBound, scalars.count))
        let upper = max(lower, min(scalarRange.upperBound, scalars.count))
        guard let utf8Index else {
            return String(decoding: utf8[lower..<upper], as: UTF8.self)
        }
        return String(decoding: utf8[utf8Index[lower]..<utf8Index[upper]], as: UTF8.self)
    }

    /// The text of a scalar range for an error message: quoted, control
    /// characters made visible, shortened when long.
    func quoted(_ scalarRange: Range<Int>) -> String {
        "'" + Self.printable(text(of: scalarRange)) + "'"
    }

    /// `text` with control characters spelled `\u{…}`, cut after 40 scalars.
    static func printable(_ text: String) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == 40 {
                out += "…"
                break
            }
            count += 1
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A syntax or unsupported-construct error located at a scalar range.
    func error(_ kind: PredicateSyntaxError.Kind, found: String, at scalarRange: Range<Int>) -> PredicateSyntaxError {
        let range = range(of: scalarRange)
        let characters = Array(text)
        let offset = min(range.start, characters.count)
        var line = 1
        var lineStart = 0
        var index = 0
        while index < offset {
            if characters[index].isNewline {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        var lineEnd = lineStart
        while lineEnd < characters.count, !characters[lineEnd].isNewline {
            lineEnd += 1
        }
        let column = offset - lineStart + 1
        let available = max(1, lineEnd - offset)
        let length = max(1, min(range.end - range.start, available))
        return PredicateSyntaxError(
            kind: kind,
            found: found,
            line: line,
            column: column,
            offset: offset,
            length: length,
            sourceLine: String(characters[lineStart..<lineEnd])
        )
    }
}
