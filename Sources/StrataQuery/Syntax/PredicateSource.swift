/// The text being lexed and parsed, kept in the forms the lexer, the parser
/// and the error reporter need: Unicode scalars to scan, and a map from
/// scalar positions to `Character` offsets (what ``SourceRange`` counts).
struct PredicateSource: Sendable {
    /// The original text.
    let text: String
    /// The text's Unicode scalars; the lexer scans these.
    let scalars: [Unicode.Scalar]
    /// The text's characters (grapheme clusters), for line/column reporting.
    let characters: [Character]
    /// For each scalar index (and one past the end), the offset of the
    /// character that contains it.
    private let characterIndex: [Int]
    /// For each scalar index (and one past the end), whether the scalar
    /// begins a character.
    private let beginsCharacter: [Bool]

    /// Prepares `text` for scanning.
    init(_ text: String) {
        self.text = text
        var scalars: [Unicode.Scalar] = []
        var characters: [Character] = []
        var characterIndex: [Int] = []
        var beginsCharacter: [Bool] = []
        scalars.reserveCapacity(text.unicodeScalars.count)
        for character in text {
            let offset = characters.count
            characters.append(character)
            var first = true
            for scalar in character.unicodeScalars {
                scalars.append(scalar)
                characterIndex.append(offset)
                beginsCharacter.append(first)
                first = false
            }
        }
        characterIndex.append(characters.count)
        beginsCharacter.append(true)
        self.scalars = scalars
        self.characters = characters
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
        characterIndex[max(0, min(index, scalars.count))]
    }

    /// The character offset just past a token ending (exclusively) at scalar
    /// `index`; a token ending inside a character covers all of it.
    func characterEnd(ofScalar index: Int) -> Int {
        let clamped = max(0, min(index, scalars.count))
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
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[lower..<upper])
        return String(view)
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
