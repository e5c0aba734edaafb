/// Splits a predicate format string into ``Token``s, one at a time.
///
/// Scans Unicode scalars; positions are reported both as scalar offsets and
/// as `Character` offsets. Malformed literals (an unterminated string, a bad
/// escape, a number with stray letters) throw; a character that starts no
/// token becomes a ``Token/Kind/invalid`` token so the parser can say what it
/// expected instead.
struct PredicateLexer: Sendable {
    /// The text being scanned.
    let source: PredicateSource
    /// The next scalar to scan.
    private var index = 0

    /// Prepares to scan `source`.
    init(source: PredicateSource) {
        self.source = source
    }

    /// Prepares to scan `text`.
    init(_ text: String) {
        self.init(source: PredicateSource(text))
    }

    /// All the tokens of `text`, ending with ``Token/Kind/end``.
    static func tokenize(_ text: String) throws(PredicateSyntaxError) -> [Token] {
        var lexer = PredicateLexer(text)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.isEnd { return tokens }
        }
    }

    // MARK: - Scanning

    /// The next token; ``Token/Kind/end`` at (and after) the end.
    mutating func next() throws(PredicateSyntaxError) -> Token {
        skipWhitespace()
        let start = index
        guard let scalar = source.scalar(at: index) else {
            return token(.end, from: start)
        }
        if Self.isIdentifierStart(scalar) {
            return lexWord(from: start)
        }
        if Self.isDigit(scalar) {
            return try lexNumber(from: start)
        }
        index += 1
        switch scalar {
        case "'", "\"":
            return try lexString(quote: scalar, from: start)
        case "(": return token(.leftParen, from: start)
        case ")": return token(.rightParen, from: start)
        case "{": return token(.leftBrace, from: start)
        case "}": return token(.rightBrace, from: start)
        case "[": return token(.leftBracket, from: start)
        case "]": return token(.rightBracket, from: start)
        case ",": return token(.comma, from: start)
        case ".": return token(.dot, from: start)
        case ":":
            if take("=") { return token(.assign, from: start) }
            return token(.colon, from: start)
        case "=":
            if take("=") { return token(.comparison(.equal), from: start) }
            if take("<") { return token(.comparison(.lessThanOrEqual), from: start) }
            if take(">") { return token(.comparison(.greaterThanOrEqual), from: start) }
            return token(.comparison(.equal), from: start)
        case "<":
            if take("=") { return token(.comparison(.lessThanOrEqual), from: start) }
            if take(">") { return token(.comparison(.notEqual), from: start) }
            return token(.comparison(.lessThan), from: start)
        case ">":
            if take("=") { return token(.comparison(.greaterThanOrEqual), from: start) }
            return token(.comparison(.greaterThan), from: start)
        case "!":
            if take("=") { return token(.comparison(.notEqual), from: start) }
            return token(.keyword(.not), from: start)
        case "&":
            if take("&") { return token(.keyword(.and), from: start) }
            return token(.invalid, from: start)
        case "|":
            if take("|") { return token(.keyword(.or), from: start) }
            return token(.invalid, from: start)
        case "+": return token(.plus, from: start)
        case "-": return token(.minus, from: start)
        case "*":
            if take("*") { return token(.power, from: start) }
            return token(.star, from: start)
        case "/": return token(.slash, from: start)
        case "#":
            let name = try lexName(after: start, what: "key name after '#'")
            return token(.escapedIdentifier(name), from: start)
        case "$":
            let name = try lexName(after: start, what: "variable name after '$'")
            return token(.variable(name), from: start)
        case "@":
            let name = try lexName(after: start, what: "collection operator name after '@'")
            return token(.collectionOperator(name), from: start)
        case "%":
            return lexFormatArgument(from: start)
        default:
            return token(.invalid, from: start)
        }
    }

    /// Skips whitespace, including line breaks and tabs.
    private mutating func skipWhitespace() {
        while let scalar = source.scalar(at: index) {
            if scalar.isASCII {
                // Space, \t, \n, \v, \f, \r.
                guard scalar == " " || (0x09...0x0D).contains(scalar.value) else { return }
            } else if !scalar.properties.isWhitespace {
                return
            }
            index += 1
        }
    }

    /// Consumes `expected` if it is the next scalar.
    private mutating func take(_ expected: Unicode.Scalar) -> Bool {
        if source.scalar(at: index) == expected {
            index += 1
            return true
        }
        return false
    }

    /// A token of `kind` from `start` to the current position.
    private func token(_ kind: Token.Kind, from start: Int) -> Token {
        Token(kind: kind, scalarRange: start..<index, range: source.range(of: start..<index))
    }

    /// An error at a scalar range: expected `expected`, found the text there
    /// (or the end of input).
    private func failure(expected: String, at range: Range<Int>) -> PredicateSyntaxError {
        let found = range.lowerBound >= source.count ? "end of input" : source.quoted(range)
        return source.error(.syntax(expected: expected), found: found, at: range)
    }

    // MARK: - Words

    /// A key name or keyword starting at `start`.
    private mutating func lexWord(from start: Int) -> Token {
        scanIdentifier()
        if let keyword = Token.Keyword.named(source.scalars[start..<index]) {
            return token(.keyword(keyword), from: start)
        }
        let word = source.text(of: start..<index)
        if index - start == 3, word.uppercased() == "UTI" {
            for keyword in [Token.Keyword.utiConformsTo, .utiEquals] where matchesSuffix(keyword.rawValue.dropFirst(3)) {
                index += keyword.rawValue.count - 3
                return token(.keyword(keyword), from: start)
            }
        }
        return token(.identifier(word), from: start)
    }

    /// Whether the scalars at the current position spell `suffix` (ASCII,
    /// any case) and are not followed by more of an identifier.
    private func matchesSuffix(_ suffix: Substring) -> Bool {
        var position = index
        for expected in suffix.unicodeScalars {
            guard let scalar = source.scalar(at: position),
                  scalar.isASCII,
                  Self.asciiUppercase(scalar) == expected
            else { return false }
            position += 1
        }
        if let next = source.scalar(at: position), Self.isIdentifierContinue(next) { return false }
        return true
    }

    /// Advances over identifier characters.
    private mutating func scanIdentifier() {
        while let scalar = source.scalar(at: index), Self.isIdentifierContinue(scalar) {
            index += 1
        }
    }

    /// The identifier after a `#`, `$` or `@` at `sigil`.
    private mutating func lexName(after sigil: Int, what: String) throws(PredicateSyntaxError) -> String {
        guard let scalar = source.scalar(at: index), Self.isIdentifierStart(scalar) else {
            throw failure(expected: what, at: index..<(index + 1))
        }
        let nameStart = index
        scanIdentifier()
        return source.text(of: nameStart..<index)
    }

    /// `%@`, `%K`, `%d`, `%lld`, `%%`…; a lone `%` is invalid.
    private mutating func lexFormatArgument(from start: Int) -> Token {
        if take("@") || take("%") { return token(.formatArgument(source.text(of: start..<index)), from: start) }
        var position = index
        while let scalar = source.scalar(at: position), scalar.isASCII,
              Self.isDigit(scalar) || "lhqLjzt.".unicodeScalars.contains(scalar) {
            position += 1
        }
        if let scalar = source.scalar(at: position), scalar.isASCII, scalar.properties.isAlphabetic {
            index = position + 1
            return token(.formatArgument(source.text(of: start..<index)), from: start)
        }
        return token(.invalid, from: start)
    }

    // MARK: - Numbers

    /// A number starting with a digit at `start`.
    private mutating func lexNumber(from start: Int) throws(PredicateSyntaxError) -> Token {
        if source.scalar(at: start) == "0", let marker = source.scalar(at: start + 1) {
            switch marker {
            case "x", "X": return try lexRadixNumber(from: start, radix: 16, name: "hexadecimal")
            case "o", "O": return try lexRadixNumber(from: start, radix: 8, name: "octal")
            case "b", "B": return try lexRadixNumber(from: start, radix: 2, name: "binary")
            default: break
            }
        }
        scanDigits()
        if source.scalar(at: index) == "." {
            guard let next = source.scalar(at: index + 1), Self.isDigit(next) else {
                throw failure(expected: "digit after decimal point", at: (index + 1)..<(index + 2))
            }
            index += 1
            scanDigits()
        }
        if let e = source.scalar(at: index), e == "e" || e == "E" {
            index += 1
            if let sign = source.scalar(at: index), sign == "+" || sign == "-" { index += 1 }
            guard let digit = source.scalar(at: index), Self.isDigit(digit) else {
                throw failure(expected: "digit in exponent", at: index..<(index + 1))
            }
            scanDigits()
        }
        if let next = source.scalar(at: index), Self.isIdentifierContinue(next) {
            throw failure(expected: "end of number", at: index..<(index + 1))
        }
        let text = source.text(of: start..<index).filter { $0 != "+" }
        return token(.number(text), from: start)
    }

    /// Advances over ASCII decimal digits.
    private mutating func scanDigits() {
        while let scalar = source.scalar(at: index), Self.isDigit(scalar) {
            index += 1
        }
    }

    /// `0x…`, `0o…`, `0b…`, converted to decimal text.
    private mutating func lexRadixNumber(from start: Int, radix: Int, name: String) throws(PredicateSyntaxError) -> Token {
        index = start + 2
        var digits: [UInt8] = []
        while let scalar = source.scalar(at: index), Self.isIdentifierContinue(scalar) {
            guard let digit = Self.digitValue(scalar), digit < radix else {
                throw failure(expected: "\(name) digit", at: index..<(index + 1))
            }
            digits.append(UInt8(digit))
            index += 1
        }
        if digits.isEmpty {
            throw failure(expected: "\(name) digit", at: index..<(index + 1))
        }
        return token(.number(Self.decimalText(digits: digits, radix: UInt64(radix))), from: start)
    }

    /// The decimal text of a number given by its digits in `radix`, any size.
    static func decimalText(digits: [UInt8], radix: UInt64) -> String {
        let base: UInt64 = 1_000_000_000
        var limbs: [UInt64] = [0]  // little-endian, base 10⁹
        for digit in digits {
            var carry = UInt64(digit)
            for position in limbs.indices {
                let value = limbs[position] * radix + carry
                limbs[position] = value % base
                carry = value / base
            }
            while carry > 0 {
                limbs.append(carry % base)
                carry /= base
            }
        }
        var text = String(limbs[limbs.count - 1])
        for limb in limbs.dropLast().reversed() {
            let part = String(limb)
            text += String(repeating: "0", count: 9 - part.count) + part
        }
        return text
    }

    // MARK: - Strings

    /// A string literal whose opening `quote` is at `start` (already consumed).
    private mutating func lexString(quote: Unicode.Scalar, from start: Int) throws(PredicateSyntaxError) -> Token {
        var value = String.UnicodeScalarView()
        while true {
            guard let scalar = source.scalar(at: index) else {
                let opening = source.error(.syntax(expected: ""), found: "", at: start..<(start + 1))
                throw failure(
                    expected: "closing \(quote) for the string at line \(opening.line), column \(opening.column)",
                    at: index..<(index + 1)
                )
            }
            index += 1
            if scalar == quote {
                return token(.string(String(value)), from: start)
            }
            if scalar != "\\" {
                value.append(scalar)
                continue
            }
            let escapeStart = index - 1
            guard let escaped = source.scalar(at: index) else { continue }  // reported as unterminated
            index += 1
            switch escaped {
            case "n": value.append("\n")
            case "t": value.append("\t")
            case "r": value.append("\r")
            case "0": value.append("\0")
            case "a": value.append("\u{07}")
            case "b": value.append("\u{08}")
            case "f": value.append("\u{0C}")
            case "v": value.append("\u{0B}")
            case "\\", "'", "\"": value.append(escaped)
            case "x":
                let code = try hexValue(digits: 2, escapeStart: escapeStart, form: "\\xHH")
                value.append(Unicode.Scalar(UInt8(truncatingIfNeeded: code)))
            case "u":
                value.append(try unicodeEscape(escapeStart: escapeStart))
            default:
                // Unknown escapes are kept as written, so regular
                // expressions such as 'a\d+' survive.
                value.append("\\")
                value.append(escaped)
            }
        }
    }

    /// `\uXXXX` (after the `u`), combining a surrogate pair `\uD83D\uDE00`.
    private mutating func unicodeEscape(escapeStart: Int) throws(PredicateSyntaxError) -> Unicode.Scalar {
        let high = try hexValue(digits: 4, escapeStart: escapeStart, form: "\\uXXXX")
        if let scalar = Unicode.Scalar(high) { return scalar }
        if (0xD800...0xDBFF).contains(high), source.scalar(at: index) == "\\", source.scalar(at: index + 1) == "u" {
            let lowStart = index
            index += 2
            let low = try hexValue(digits: 4, escapeStart: lowStart, form: "\\uXXXX")
            if (0xDC00...0xDFFF).contains(low),
               let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)) {
                return scalar
            }
        }
        throw source.error(
            .syntax(expected: "a Unicode scalar (a lone surrogate is not one)"),
            found: source.quoted(escapeStart..<index),
            at: escapeStart..<index
        )
    }

    /// `digits` hexadecimal digits at the current position.
    private mutating func hexValue(digits: Int, escapeStart: Int, form: String) throws(PredicateSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard let scalar = source.scalar(at: index), let digit = Self.digitValue(scalar), digit < 16 else {
                let end = min(max(index + 1, escapeStart + 2), source.count)
                let range = escapeStart..<max(end, escapeStart + 1)
                throw source.error(
                    .syntax(expected: "escape \(form) with \(digits) hexadecimal digits"),
                    found: index >= source.count ? "end of input" : source.quoted(range),
                    at: range
                )
            }
            value = value * 16 + UInt32(digit)
            index += 1
        }
        return value
    }

    // MARK: - Character classes

    /// ASCII `0`–`9`.
    static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x30 && scalar.value <= 0x39
    }

    /// The value of an ASCII digit or letter as a digit (`a`/`A` = 10…).
    static func digitValue(_ scalar: Unicode.Scalar) -> Int? {
        switch scalar.value {
        case 0x30...0x39: Int(scalar.value - 0x30)
        case 0x41...0x5A: Int(scalar.value - 0x41 + 10)
        case 0x61...0x7A: Int(scalar.value - 0x61 + 10)
        default: nil
        }
    }

    /// ASCII upper case of an ASCII scalar.
    static func asciiUppercase(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        (0x61...0x7A).contains(scalar.value) ? Unicode.Scalar(UInt8(scalar.value - 0x20)) : scalar
    }

    /// A letter or `_`.
    static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            return scalar == "_" || (0x41...0x5A).contains(scalar.value) || (0x61...0x7A).contains(scalar.value)
        }
        return scalar.properties.isAlphabetic
    }

    /// A letter, digit, combining mark or `_`.
    static func isIdentifierContinue(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            return scalar == "_" || isDigit(scalar) || digitValue(scalar) != nil
        }
        if scalar.properties.isAlphabetic { return true }
        switch scalar.properties.generalCategory {
        case .decimalNumber, .nonspacingMark, .spacingMark, .enclosingMark, .connectorPunctuation: return true
        default: return false
        }
    }

    /// Whether `word` lexes as a single plain identifier (not a keyword).
    static func isPlainIdentifier(_ word: String) -> Bool {
        var scalars = word.unicodeScalars.makeIterator()
        guard let first = scalars.next(), isIdentifierStart(first) else { return false }
        while let scalar = scalars.next() {
            if !isIdentifierContinue(scalar) { return false }
        }
        return Token.Keyword.named(word) == nil
    }
}
