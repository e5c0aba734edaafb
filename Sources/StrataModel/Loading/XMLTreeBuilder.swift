import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Builds an ``XMLElementNode`` tree with Foundation's `XMLParser`.
///
/// The builder is a parser delegate used synchronously inside ``parse(_:)``;
/// it never escapes that call, so nothing non-`Sendable` leaks out.
final class XMLTreeBuilder: NSObject, XMLParserDelegate {
    /// Why a document could not be parsed, and where.
    struct Failure: Error, Sendable, Hashable {
        /// What went wrong.
        var message: String
        /// The 1-based line, when the parser knew it.
        var line: Int?
        /// The 1-based column, when the parser knew it.
        var column: Int?
    }

    private var stack: [XMLElementNode] = []
    private var root: XMLElementNode?
    private var failure: Failure?

    private override init() {
        super.init()
    }

    /// Parses `data` and returns its root element, or the first error found.
    static func parse(_ data: Data) -> Result<XMLElementNode, Failure> {
        guard !data.isEmpty else {
            return .failure(Failure(message: "the file is empty", line: nil, column: nil))
        }
        // FoundationXML runs libxml2 in recovery mode and force-unwraps the
        // UTF-8 decoding of names it is handed, so invalid UTF-8 would crash
        // inside Foundation: refuse it here. (Xcode always writes UTF-8.)
        if let offset = firstInvalidUTF8Offset(in: data) {
            let (line, column) = position(of: offset, in: data)
            return .failure(Failure(message: "not UTF-8 text (invalid byte 0x\(String(data[data.startIndex + offset], radix: 16, uppercase: true)))",
                                    line: line, column: column))
        }
        // FoundationXML also reads a NULL string for a processing
        // instruction without data (`<?xml?>`, `<?target ?>`), and expands
        // entities into markup it parses again: refuse both.
        if let (offset, isDocumentType) = firstUnsupportedMarkup(in: data) {
            let (line, column) = position(of: offset, in: data)
            let what = isDocumentType ? "a document type or entity declaration (<!DOCTYPE …>, <!ENTITY …>)" : "a processing instruction without data (<?…?>)"
            return .failure(Failure(message: "\(what) is not supported in a model file", line: line, column: column))
        }
        let builder = XMLTreeBuilder()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = false
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = builder
        let succeeded = parser.parse()
        parser.delegate = nil
        if let failure = builder.failure {
            return .failure(failure)
        }
        if !succeeded {
            return .failure(Self.failure(from: parser.parserError, line: parser.lineNumber, column: parser.columnNumber))
        }
        guard let root = builder.root else {
            return .failure(Failure(message: "the document has no root element", line: nil, column: nil))
        }
        return .success(root)
    }

    /// The offset of the first processing instruction with a target and no
    /// data (`<?name?>`, `<?name   ?>`); nil when there is none.
    static func firstEmptyProcessingInstruction(in data: Data) -> Int? {
        firstUnsupportedMarkup(in: data).flatMap { $0.isDocumentType ? nil : $0.offset }
    }

    /// The first markup FoundationXML cannot be trusted with: a processing
    /// instruction without data (its callback reads a NULL string), or a
    /// document type declaration, whose entities FoundationXML expands and
    /// parses again (so `&e;` could bring such an instruction back in).
    /// Xcode writes neither. Every `<?` is checked where it stands, inside
    /// comments and other instructions too: libxml2 recovers from broken
    /// markup in ways a scanner cannot follow, so none is skipped.
    static func firstUnsupportedMarkup(in data: Data) -> (offset: Int, isDocumentType: Bool)? {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> (offset: Int, isDocumentType: Bool)? in
            let bytes = raw.bindMemory(to: UInt8.self)
            let count = bytes.count
            func starts(_ text: StaticString, at index: Int) -> Bool {
                let length = text.utf8CodeUnitCount
                guard index + length <= count else { return false }
                return text.withUTF8Buffer { pattern in
                    (0..<length).allSatisfy { bytes[index + $0] == pattern[$0] }
                }
            }
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
            for index in 0..<count where bytes[index] == UInt8(ascii: "<") {
                if starts("<!DOCTYPE", at: index) || starts("<!ENTITY", at: index) {
                    return (index, true)
                }
                guard starts("<?", at: index) else { continue }
                var cursor = index + 2
                while cursor < count, !isSpace(bytes[cursor]), !starts("?>", at: cursor) { cursor += 1 }
                while cursor < count, isSpace(bytes[cursor]) { cursor += 1 }
                if cursor >= count || starts("?>", at: cursor) { return (index, false) }
            }
            return nil
        }
    }

    /// The offset of the first byte that does not belong to a valid UTF-8
    /// sequence (overlong forms, surrogates and values above U+10FFFF included).
    static func firstInvalidUTF8Offset(in data: Data) -> Int? {
        let bytes = [UInt8](data)
        var i = 0
        while i < bytes.count {
            let lead = bytes[i]
            let length: Int
            var lower: UInt8 = 0x80, upper: UInt8 = 0xBF   // bounds of the second byte
            switch lead {
            case 0x00...0x7F: i += 1; continue
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: return i
            }
            guard i + length <= bytes.count else { return i }
            guard (lower...upper).contains(bytes[i + 1]) else { return i }
            for j in 2..<length where !(0x80...0xBF).contains(bytes[i + j]) {
                return i
            }
            i += length
        }
        return nil
    }

    /// 1-based line and column (in bytes) of a byte offset.
    private static func position(of offset: Int, in data: Data) -> (line: Int, column: Int) {
        var line = 1, column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return (line, column)
    }

    private static func failure(from error: (any Error)?, line: Int, column: Int) -> Failure {
        var message = "not well-formed XML"
        if let error {
            let code = (error as NSError).code
            if let known = XMLParser.ErrorCode(rawValue: code) {
                message += " (\(describe(known)), code \(code))"
            } else {
                message += " (code \(code))"
            }
        }
        return Failure(message: message, line: line > 0 ? line : nil, column: column > 0 ? column : nil)
    }

    private static func describe(_ code: XMLParser.ErrorCode) -> String {
        switch code {
        case .prematureDocumentEndError: "premature end of document"
        case .emptyDocumentError: "empty document"
        case .invalidCharacterError: "invalid character"
        case .tagNameMismatchError: "mismatched closing tag"
        case .gtRequiredError, .ltRequiredError: "malformed tag"
        case .attributeNotStartedError, .attributeNotFinishedError, .attributeHasNoValueError,
             .attributeRedefinedError:
            "malformed attribute"
        case .entityRefLoopError, .entityBoundaryError, .entityIsExternalError, .entityIsParameterError,
             .undeclaredEntityError, .entityReferenceMissingSemiError, .entityReferenceWithoutNameError:
            "bad entity reference"
        case .encodingNotSupportedError, .unknownEncodingError: "unsupported encoding"
        case .documentStartError: "document does not start with XML"
        case .extraContentError: "content after the root element"
        case .notWellBalancedError: "unbalanced tags"
        default: "syntax error"
        }
    }

    // MARK: XMLParserDelegate

    func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        stack.append(XMLElementNode(name: elementName, attributes: attributeDict, line: max(parser.lineNumber, 1), children: []))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        guard let node = stack.popLast() else { return }
        if stack.isEmpty {
            if root == nil { root = node }
        } else {
            stack[stack.count - 1].children.append(node)
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if failure == nil {
            failure = Self.failure(from: parseError, line: parser.lineNumber, column: parser.columnNumber)
        }
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) {
        if failure == nil {
            failure = Self.failure(from: validationError, line: parser.lineNumber, column: parser.columnNumber)
        }
    }
}
