// Canonical format text for parsed predicates and expressions.
//
// The text parses back to an equal value (ranges aside) and prints
// identically: keywords in upper case, `==` and `!=` for equality,
// strings in double quotes with escapes, parentheses only where
// precedence needs them, keys that are keywords escaped with `#`.

extension Predicate: CustomStringConvertible {
    /// Canonical format text, for example
    /// `title CONTAINS[cd] "x" AND pages > 100`.
    public var description: String {
        var text = ""
        PredicatePrinter.write(self, to: &text)
        return text
    }
}

extension Comparison: CustomStringConvertible {
    /// Canonical format text, for example `ANY tags.name ==[c] "swift"`.
    public var description: String {
        var text = ""
        PredicatePrinter.write(self, to: &text)
        return text
    }
}

extension Expression: CustomStringConvertible {
    /// Canonical format text, for example `items.@sum.qty` or
    /// `canonical:(title)`.
    public var description: String {
        var text = ""
        PredicatePrinter.write(self, to: &text)
        return text
    }
}

extension Literal: CustomStringConvertible {
    /// Canonical format text: `nil`, `TRUE`, `FALSE`, the number's text, or
    /// a double-quoted string with escapes.
    public var description: String {
        var text = ""
        PredicatePrinter.write(self, to: &text)
        return text
    }
}

/// Writes the canonical format text of the predicate AST.
enum PredicatePrinter {
    /// An empty AND is true and an empty OR false (as in
    /// NSCompoundPredicate); a one-element compound is its element.
    static func simplified(_ predicate: Predicate) -> Predicate {
        switch predicate {
        case .and(let terms) where terms.isEmpty: .truePredicate
        case .or(let terms) where terms.isEmpty: .falsePredicate
        case .and(let terms) where terms.count == 1: simplified(terms[0])
        case .or(let terms) where terms.count == 1: simplified(terms[0])
        default: predicate
        }
    }

    /// Writes `predicate`.
    static func write(_ predicate: Predicate, to text: inout String) {
        switch simplified(predicate) {
        case .truePredicate:
            text += "TRUEPREDICATE"
        case .falsePredicate:
            text += "FALSEPREDICATE"
        case .not(let operand):
            text += "NOT "
            write(operand, to: &text, parenthesized: isCompound(operand))
        case .and(let terms):
            for (index, term) in terms.enumerated() {
                if index > 0 { text += " AND " }
                write(term, to: &text, parenthesized: isCompound(term))
            }
        case .or(let terms):
            for (index, term) in terms.enumerated() {
                if index > 0 { text += " OR " }
                write(term, to: &text, parenthesized: isOr(term))
            }
        case .comparison(let comparison):
            write(comparison, to: &text)
        }
    }

    /// Writes `predicate`, in parentheses if asked.
    private static func write(_ predicate: Predicate, to text: inout String, parenthesized: Bool) {
        if parenthesized { text += "(" }
        write(predicate, to: &text)
        if parenthesized { text += ")" }
    }

    /// Whether `predicate` prints as an AND or OR of several terms.
    private static func isCompound(_ predicate: Predicate) -> Bool {
        switch simplified(predicate) {
        case .and, .or: true
        default: false
        }
    }

    /// Whether `predicate` prints as an OR of several terms.
    private static func isOr(_ predicate: Predicate) -> Bool {
        if case .or = simplified(predicate) { return true }
        return false
    }

    /// Writes `comparison`.
    static func write(_ comparison: Comparison, to text: inout String) {
        if let quantifier = comparison.quantifier {
            text += quantifier.rawValue + " "
        }
        write(comparison.lhs, to: &text)
        text += " " + comparison.op.rawValue
        if !comparison.options.isEmpty {
            text += "["
            if comparison.options.contains(.caseInsensitive) { text += "c" }
            if comparison.options.contains(.diacriticInsensitive) { text += "d" }
            text += "]"
        }
        text += " "
        write(comparison.rhs, to: &text)
    }

    /// Writes `expression`.
    static func write(_ expression: Expression, to text: inout String) {
        switch expression {
        case .literal(let literal, _):
            write(literal, to: &text)
        case .keyPath(let base, let components, _):
            switch base {
            case .evaluatedObject:
                if components.isEmpty { text += "SELF" }
            case .variable(let name):
                text += "$" + name
            case .subquery(let subquery):
                text += "SUBQUERY("
                write(subquery.collection, to: &text)
                text += ", $" + subquery.variable + ", "
                write(subquery.predicate, to: &text)
                text += ")"
            }
            for (index, component) in components.enumerated() {
                if index > 0 || base != .evaluatedObject { text += "." }
                text += key(component)
            }
        case .array(let elements, _):
            text += "{"
            for (index, element) in elements.enumerated() {
                if index > 0 { text += ", " }
                write(element, to: &text)
            }
            text += "}"
        case .cast(let value, let type, _):
            text += "CAST("
            write(value, to: &text)
            text += ", "
            writeString(type, to: &text)
            text += ")"
        case .function(let name, let arguments, _):
            text += name
            text += arguments.isEmpty ? "(" : ":("
            for (index, argument) in arguments.enumerated() {
                if index > 0 { text += ", " }
                write(argument, to: &text)
            }
            text += ")"
        }
    }

    /// A key path component as written: `#` before a keyword.
    private static func key(_ component: String) -> String {
        if component.hasPrefix("@") || PredicateLexer.isPlainIdentifier(component) { return component }
        if Token.Keyword.named(component) != nil { return "#" + component }
        return component
    }

    /// Writes `literal`.
    static func write(_ literal: Literal, to text: inout String) {
        switch literal {
        case .null: text += "nil"
        case .boolean(let value): text += value ? "TRUE" : "FALSE"
        case .number(let number): text += number
        case .string(let string): writeString(string, to: &text)
        }
    }

    /// Writes `string` in double quotes, escaping `"`, `\` and control
    /// characters.
    static func writeString(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            case "\r": text += "\\r"
            case "\0": text += "\\0"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }
}
