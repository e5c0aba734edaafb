import Foundation

extension PropertyValue {
    /// The outcome of reading a default value or bound written in a model file.
    enum XcodeParseResult: Sendable, Hashable {
        /// The text parsed to this value.
        case value(PropertyValue)
        /// The text does not parse as the attribute's type; the reason says why.
        case invalid(String)
        /// The attribute's type takes no such value (e.g. a default for `Binary`).
        case unsupported
    }

    /// Reads `defaultValueString` for an attribute of `type`. Dates use
    /// ``parseXcodeDate(_:)`` (the loader prefers `defaultDateTimeInterval`).
    static func parseXcodeDefault(_ text: String, as type: AttributeType) -> XcodeParseResult {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch type {
        case .integer16, .integer32, .integer64:
            return parseXcodeInteger(trimmed, as: type)
        case .decimal:
            return parseXcodeDecimal(trimmed)
        case .double, .float:
            return parseXcodeDouble(trimmed)
        case .boolean:
            switch trimmed.lowercased() {
            case "yes", "true", "1": return .value(.boolean(true))
            case "no", "false", "0": return .value(.boolean(false))
            default: return .invalid("'\(text)' is not a Boolean (YES, NO, true, false, 1 or 0)")
            }
        case .string:
            return .value(.string(text))
        case .date:
            return parseXcodeDate(trimmed)
        case .uuid:
            guard let uuid = UUID(uuidString: trimmed) else { return .invalid("'\(text)' is not a UUID") }
            return .value(.uuid(uuid))
        case .uri:
            guard !trimmed.isEmpty, URL(string: trimmed) != nil else { return .invalid("'\(text)' is not a URI") }
            return .value(.uri(trimmed))
        case .binary, .transformable, .undefined, .objectID, .composite:
            return .unsupported
        }
    }

    /// Reads `minValueString` / `maxValueString` for an attribute of `type`:
    /// numbers for numeric types, lengths for `String` and `Binary`, dates
    /// for `Date` (the loader prefers `min/maxDateTimeInterval`).
    static func parseXcodeBound(_ text: String, as type: AttributeType) -> XcodeParseResult {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch type {
        case .integer16, .integer32, .integer64:
            return parseXcodeInteger(trimmed, as: type)
        case .decimal:
            return parseXcodeDecimal(trimmed)
        case .double, .float:
            return parseXcodeDouble(trimmed)
        case .string, .binary:
            guard let length = Int64(trimmed), length >= 0 else {
                return .invalid("'\(text)' is not a length (a whole number ≥ 0)")
            }
            return .value(.integer(length))
        case .date:
            return parseXcodeDate(trimmed)
        case .boolean, .uuid, .uri, .transformable, .undefined, .objectID, .composite:
            return .unsupported
        }
    }

    /// Reads a `…DateTimeInterval` attribute: seconds since 2001-01-01 00:00 UTC.
    static func parseXcodeTimeInterval(_ text: String) -> XcodeParseResult {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let seconds = Double(trimmed), seconds.isFinite else {
            return .invalid("'\(text)' is not a number of seconds since 2001-01-01")
        }
        return .value(.date(Date(timeIntervalSinceReferenceDate: seconds)))
    }

    /// Reads a date written as seconds since 2001 or as `yyyy-MM-dd[ HH:mm[:ss][ Z]]` (UTC unless a zone is given).
    static func parseXcodeDate(_ text: String) -> XcodeParseResult {
        if case .value(let value) = parseXcodeTimeInterval(text) { return .value(value) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        for format in ["yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return .value(.date(date)) }
        }
        return .invalid("'\(text)' is not a date")
    }

    private static func parseXcodeInteger(_ text: String, as type: AttributeType) -> XcodeParseResult {
        guard let number = Int64(text) else { return .invalid("'\(text)' is not an integer") }
        if let range = type.integerRange, !range.contains(number) {
            return .invalid("\(number) does not fit \(type.xcodeName) (\(range.lowerBound)…\(range.upperBound))")
        }
        return .value(.integer(number))
    }

    private static func parseXcodeDouble(_ text: String) -> XcodeParseResult {
        guard let number = Double(text), number.isFinite else { return .invalid("'\(text)' is not a finite number") }
        return .value(.double(number))
    }

    private static func parseXcodeDecimal(_ text: String) -> XcodeParseResult {
        guard isDecimalLiteral(text), let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !number.isNaN else {
            return .invalid("'\(text)' is not a decimal number")
        }
        return .value(.decimal(number))
    }

    /// `[+-]digits[.digits][e[+-]digits]` with at least one digit in the mantissa.
    private static func isDecimalLiteral(_ text: String) -> Bool {
        var scalars = Substring(text).unicodeScalars[...]
        func digits() -> Int {
            var count = 0
            while let first = scalars.first, ("0"..."9").contains(first) {
                scalars.removeFirst()
                count += 1
            }
            return count
        }
        if let first = scalars.first, first == "+" || first == "-" { scalars.removeFirst() }
        var mantissa = digits()
        if scalars.first == "." {
            scalars.removeFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if let first = scalars.first, first == "e" || first == "E" {
            scalars.removeFirst()
            if let sign = scalars.first, sign == "+" || sign == "-" { scalars.removeFirst() }
            guard digits() > 0 else { return false }
        }
        return scalars.isEmpty
    }
}
