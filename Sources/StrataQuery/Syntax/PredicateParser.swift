import StrataModel

/// Parses NSPredicate format strings into ``Predicate`` values, and
/// derivation expressions into ``Expression`` values.
///
/// The grammar (keywords are case-insensitive):
///
/// ```
/// predicate   := or
/// or          := and (("OR" | "||") and)*
/// and         := unary (("AND" | "&&") unary)*
/// unary       := ("NOT" | "!") unary | primary
/// primary     := "TRUEPREDICATE" | "FALSEPREDICATE" | "(" predicate ")"
///              | [quantifier] expression operator [options] expression
///              | boolean-literal
/// quantifier  := "ANY" | "SOME" | "ALL" | "NONE"
/// operator    := = == != <> < <= =< > >= => BETWEEN IN BEGINSWITH
///                ENDSWITH CONTAINS LIKE MATCHES
/// options     := "[" (c | d | n)+ "]"
/// expression  := literal | keypath | "{" [expression ("," expression)*] "}"
///              | "(" expression ")" | CAST "(" expression "," string ")"
///              | name ":" "(" arguments ")" | name "(" ")"
/// keypath     := (name | "#" name | "SELF" | "$" name | "@" op | subquery)
///                ("." (name | "#" name | "@" op))*
/// subquery    := SUBQUERY "(" expression "," "$" name "," predicate ")"
/// ```
///
/// `AND` binds tighter than `OR` and `NOT` tighter than both; a chain
/// `a AND b AND c` becomes one ``Predicate/and(_:)`` (a parenthesised
/// group stays a group). A bare `TRUE`/`YES`/`FALSE`/`NO` where a predicate
/// is expected means `TRUEPREDICATE`/`FALSEPREDICATE`; any other bare
/// expression is an error.
///
/// Errors are ``StrataError``s with code `.predicateSyntax` (or
/// `.unsupported` for valid NSPredicate syntax Strata does not implement:
/// arithmetic, `FUNCTION()`, `ANYKEY`, `%@` format arguments, subscripts,
/// union collection operators); the message gives the line, the column, what
/// was expected and found, the source line and a caret under the offending
/// token. ``parseDetailed(_:)`` throws the structured ``PredicateSyntaxError``.
public struct PredicateParser: Sendable {
    /// How deeply parentheses, `NOT`s, arrays and calls may nest; deeper
    /// input is rejected rather than risking the stack.
    public static let maximumNestingDepth = 64

    // MARK: - Entry points

    /// Parses `text` as one predicate.
    ///
    /// - Throws: ``StrataError`` with code `.predicateSyntax` or `.unsupported`.
    public static func parse(_ text: String) throws -> Predicate {
        do {
            return try parseDetailed(text)
        } catch {
            throw error.strataError
        }
    }

    /// Parses `text` as one expression (a derivation expression such as
    /// `author.name`, `items.@sum.qty`, `canonical:(title)` or `now()`).
    ///
    /// - Throws: ``StrataError`` with code `.predicateSyntax` or `.unsupported`.
    public static func parseExpression(_ text: String) throws -> Expression {
        do {
            return try parseExpressionDetailed(text)
        } catch {
            throw error.strataError
        }
    }

    /// Parses `text` as one predicate, throwing the structured error.
    public static func parseDetailed(_ text: String) throws(PredicateSyntaxError) -> Predicate {
        do {
            var parser = PredicateParser(text)
            let predicate = try parser.parseOr()
            try parser.expectEnd("AND, OR or end of input")
            return predicate
        } catch {
            throw error.error
        }
    }

    /// Parses `text` as one expression, throwing the structured error.
    public static func parseExpressionDetailed(_ text: String) throws(PredicateSyntaxError) -> Expression {
        do {
            var parser = PredicateParser(text)
            let expression = try parser.parseExpression(expected: "expression")
            try parser.expectEnd("end of input")
            return expression
        } catch {
            throw error.error
        }
    }

    // MARK: - State

    /// What the parsing functions throw: the error in a box, so a thrown
    /// error costs one pointer in each (recursive) frame rather than the
    /// whole structure.
    private final class Failure: Error, Sendable {
        let error: PredicateSyntaxError
        init(_ error: PredicateSyntaxError) { self.error = error }
    }

    /// A parenthesised group is either a predicate or (as in `(a) == 1`) an
    /// expression.
    private enum Parenthesized {
        case predicate(Predicate)
        case expression(Expression)
    }

    /// The token source.
    private var lexer: PredicateLexer
    /// Tokens lexed but not consumed yet.
    private var lookahead: [Token] = []
    /// The character offset just past the last consumed token.
    private var previousEnd = 0
    /// The scalar offset just past the last consumed token.
    private var previousScalarEnd = 0
    /// The current nesting depth.
    private var depth = 0

    private init(_ text: String) {
        lexer = PredicateLexer(text)
    }

    private var source: PredicateSource { lexer.source }

    // MARK: - Tokens

    /// The token `offset` places ahead, without consuming it.
    private mutating func peek(_ offset: Int = 0) throws(Failure) -> Token {
        if offset < lookahead.count { return lookahead[offset] }
        return try lex(upTo: offset)
    }

    /// Lexes tokens until `offset` is in the lookahead and returns it; kept
    /// out of line so the lexer's frame is not part of every parsing frame.
    @inline(never)
    private mutating func lex(upTo offset: Int) throws(Failure) -> Token {
        while lookahead.count <= offset {
            do {
                lookahead.append(try lexer.next())
            } catch {
                throw Failure(error)
            }
        }
        return lookahead[offset]
    }

    /// Consumes and returns the next token.
    @discardableResult
    private mutating func advance() throws(Failure) -> Token {
        let token = try peek()
        lookahead.removeFirst()
        previousEnd = token.range.end
        previousScalarEnd = token.scalarRange.upperBound
        return token
    }

    /// Consumes the next token if it is `kind`.
    private mutating func take(_ kind: Token.Kind) throws(Failure) -> Bool {
        guard try peek().kind == kind else { return false }
        try advance()
        return true
    }

    /// Consumes the next token, which must be `kind`.
    @discardableResult
    private mutating func expect(_ kind: Token.Kind, _ expected: String) throws(Failure) -> Token {
        let token = try peek()
        guard token.kind == kind else { try fail(expected: expected, at: token) }
        return try advance()
    }

    /// Fails unless the whole text has been consumed.
    private mutating func expectEnd(_ expected: String) throws(Failure) {
        let token = try peek()
        guard token.isEnd else { try fail(expected: expected, at: token) }
    }

    /// Enters one nesting level at `token`.
    private mutating func enter(_ token: Token) throws(Failure) {
        depth += 1
        if depth > Self.maximumNestingDepth {
            try unsupported("nesting deeper than \(Self.maximumNestingDepth) levels", at: token)
        }
    }

    /// Leaves one nesting level.
    private mutating func leave() {
        depth -= 1
    }

    // MARK: - Errors

    /// Throws a syntax error at `token`: expected `expected`, found the
    /// token. A format argument is reported as unsupported instead.
    ///
    /// Error paths are kept out of line so they cost no stack in the
    /// recursive parsing functions.
    @inline(never)
    private func fail(expected: String, at token: Token, keyHint: Bool = false) throws(Failure) -> Never {
        if case .formatArgument = token.kind {
            try unsupported("format arguments (use $variables instead)", at: token)
        }
        throw Failure(source.error(.syntax(expected: expected), found: describe(token, keyHint: keyHint), at: location(of: token)))
    }

    /// Throws a syntax error at `token` with an explicit description of what
    /// was found.
    @inline(never)
    private func fail(expected: String, found: String, at token: Token) throws(Failure) -> Never {
        throw Failure(source.error(.syntax(expected: expected), found: found, at: location(of: token)))
    }

    /// Throws an unsupported-construct error at `token`.
    @inline(never)
    private func unsupported(_ feature: String, at token: Token) throws(Failure) -> Never {
        throw Failure(source.error(.unsupported(feature: feature), found: describe(token, keyHint: false), at: location(of: token)))
    }

    /// Where an error at `token` points: the token, or for the end of the
    /// text, just after the last token (not on a trailing empty line).
    private func location(of token: Token) -> Range<Int> {
        token.isEnd ? previousScalarEnd..<previousScalarEnd : token.scalarRange
    }

    /// How a token is named in an error message.
    private func describe(_ token: Token, keyHint: Bool) -> String {
        let text = source.quoted(token.scalarRange)
        switch token.kind {
        case .end:
            return "end of input"
        case .keyword:
            let written = source.text(of: token.scalarRange)
            if keyHint, let first = written.unicodeScalars.first, PredicateLexer.isIdentifierStart(first) {
                return "keyword \(text) (write #\(written) to use it as a key)"
            }
            return "keyword \(text)"
        case .string:
            return "string " + PredicateSource.printable(source.text(of: token.scalarRange))
        case .number:
            return "number " + PredicateSource.printable(source.text(of: token.scalarRange))
        default:
            return text
        }
    }

    // MARK: - Predicates

    /// `or := and (OR and)*`.
    private mutating func parseOr() throws(Failure) -> Predicate {
        try continueOr(from: try parseUnary())
    }

    /// The rest of an `or` whose first unary operand is `first`.
    private mutating func continueOr(from first: Predicate) throws(Failure) -> Predicate {
        var terms = [first]
        while try peek().isKeyword(.and) {
            try advance()
            terms.append(try parseUnary())
        }
        var alternatives = [terms.count == 1 ? first : .and(terms)]
        while try peek().isKeyword(.or) {
            try advance()
            alternatives.append(try parseAnd())
        }
        return alternatives.count == 1 ? alternatives[0] : .or(alternatives)
    }

    /// `and := unary (AND unary)*`.
    private mutating func parseAnd() throws(Failure) -> Predicate {
        let first = try parseUnary()
        var terms = [first]
        while try peek().isKeyword(.and) {
            try advance()
            terms.append(try parseUnary())
        }
        return terms.count == 1 ? first : .and(terms)
    }

    /// `unary := NOT unary | primary`.
    private mutating func parseUnary() throws(Failure) -> Predicate {
        let token = try peek()
        guard token.isKeyword(.not) else { return try parsePrimaryPredicate() }
        try advance()
        try enter(token)
        defer { leave() }
        return .not(try parseUnary())
    }

    /// `TRUEPREDICATE`, `FALSEPREDICATE`, a parenthesised predicate, or a
    /// comparison.
    private mutating func parsePrimaryPredicate() throws(Failure) -> Predicate {
        let token = try peek()
        switch token.kind {
        case .keyword(.truePredicate):
            try advance()
            return .truePredicate
        case .keyword(.falsePredicate):
            try advance()
            return .falsePredicate
        case .leftParen:
            switch try parseParenthesized() {
            case .predicate(let predicate):
                return predicate
            case .expression(let expression):
                return try parseComparisonTail(quantifier: nil, lhs: expression, start: token.range.start)
            }
        case .keyword(let keyword):
            if let quantifier = keyword.quantifier {
                try advance()
                let lhs = try parseExpression(expected: "expression after \(keyword.rawValue)")
                return try parseComparisonTail(quantifier: quantifier, lhs: lhs, start: token.range.start)
            }
        default:
            break
        }
        let lhs = try parseExpression(expected: "predicate")
        return try parseComparisonTail(quantifier: nil, lhs: lhs, start: token.range.start)
    }

    /// `( … )` where a predicate is expected: a parenthesised predicate, or
    /// a parenthesised expression that starts a comparison (`(a) == 1`).
    @inline(never)
    private mutating func parseParenthesized() throws(Failure) -> Parenthesized {
        let open = try advance()
        try enter(open)
        defer { leave() }
        let inner = try peek()
        let first: Predicate
        switch inner.kind {
        case .leftParen:
            switch try parseParenthesized() {
            case .predicate(let predicate):
                first = predicate
            case .expression(let expression):
                if try take(.rightParen) { return .expression(expression) }
                first = try parseComparisonTail(quantifier: nil, lhs: expression, start: inner.range.start)
            }
        case .keyword(let keyword) where keyword == .not || keyword == .truePredicate
            || keyword == .falsePredicate || keyword.quantifier != nil:
            first = try parseUnary()
        default:
            let expression = try parseExpression(expected: "predicate")
            if try take(.rightParen) { return .expression(expression) }
            first = try parseComparisonTail(quantifier: nil, lhs: expression, start: inner.range.start)
        }
        let predicate = try continueOr(from: first)
        try expect(.rightParen, "AND, OR or ')'")
        return .predicate(predicate)
    }

    /// The operator, options and right side of a comparison whose left side
    /// has been parsed.
    private mutating func parseComparisonTail(quantifier: Quantifier?, lhs: Expression, start: Int) throws(Failure) -> Predicate {
        let token = try peek()
        let op: ComparisonOperator
        switch token.kind {
        case .comparison(let comparison):
            op = comparison
        case .keyword(let keyword) where keyword.comparisonOperator != nil:
            guard let keywordOperator = keyword.comparisonOperator else { try fail(expected: "comparison operator", at: token) }
            op = keywordOperator
        case .keyword(.utiConformsTo), .keyword(.utiEquals):
            try unsupported("UTI operators", at: token)
        case .plus, .minus, .star, .slash, .power:
            try unsupported("arithmetic expressions", at: token)
        case .keyword(.not) where quantifier != nil || !Self.isBoolean(lhs):
            try fail(expected: "comparison operator (to negate a comparison, put NOT before it)", at: token)
        default:
            if quantifier == nil, case .literal(.boolean(let value), _) = lhs {
                return value ? .truePredicate : .falsePredicate
            }
            try fail(expected: "comparison operator", at: token)
        }
        try advance()
        let options = try parseOptions()
        let rhsToken = try peek()
        let rhs = try parseExpression(expected: "expression")
        if op == .between, case .array(let items, _) = rhs, items.count != 2 {
            try fail(
                expected: "{lower, upper} after BETWEEN",
                found: "an array of \(items.count) value\(items.count == 1 ? "" : "s")",
                at: rhsToken
            )
        }
        return .comparison(Comparison(
            quantifier: quantifier,
            lhs: lhs,
            op: op,
            options: options,
            rhs: rhs,
            range: SourceRange(start: start, end: previousEnd)
        ))
    }

    /// Whether `expression` is a boolean literal.
    private static func isBoolean(_ expression: Expression) -> Bool {
        if case .literal(.boolean, _) = expression { return true }
        return false
    }

    /// `[c]`, `[d]`, `[cd]`, `[dc]`, `[n]` (normalised: accepted, no effect).
    @inline(never)
    private mutating func parseOptions() throws(Failure) -> StringComparisonOptions {
        guard try take(.leftBracket) else { return [] }
        let token = try peek()
        let expected = "comparison options c, d or cd"
        guard case .identifier(let letters) = token.kind else {
            try fail(expected: expected, at: token)
        }
        var options: StringComparisonOptions = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": break
            default: try fail(expected: expected, at: token)
            }
        }
        try advance()
        try expect(.rightBracket, "']'")
        return options
    }

    // MARK: - Expressions

    /// An expression, rejecting the arithmetic, assignment and subscript
    /// forms that may follow it.
    private mutating func parseExpression(expected: String) throws(Failure) -> Expression {
        let expression = try parsePrimaryExpression(expected: expected)
        let next = try peek()
        switch next.kind {
        case .plus, .minus, .star, .slash, .power:
            try unsupported("arithmetic expressions", at: next)
        case .assign:
            try unsupported("variable assignment", at: next)
        case .leftBracket:
            try unsupported("index subscripts", at: next)
        default:
            return expression
        }
    }

    /// A literal, key path, array, cast, function call, subquery or
    /// parenthesised expression.
    ///
    /// Kept small: the constructs that nest are parsed by functions of their
    /// own (not inlined), so each nesting level costs little stack.
    private mutating func parsePrimaryExpression(expected: String) throws(Failure) -> Expression {
        let token = try peek()
        switch token.kind {
        case .leftBrace:
            return try parseArray()
        case .leftParen:
            return try parseParenthesizedExpression()
        case .keyword(.subquery):
            return try parseSubquery()
        case .keyword(.cast):
            return try parseCast()
        case .identifier:
            let next = try peek(1).kind
            if next == .colon || next == .leftParen {
                return try parseFunction()
            }
            return try parseSimpleExpression(expected: expected)
        default:
            return try parseSimpleExpression(expected: expected)
        }
    }

    /// An expression that does not nest: a literal or a key path not based
    /// on a subquery.
    @inline(never)
    private mutating func parseSimpleExpression(expected: String) throws(Failure) -> Expression {
        let token = try peek()
        let start = token.range.start
        switch token.kind {
        case .string(let value):
            try advance()
            return .literal(.string(value), token.range)
        case .number(let text):
            try advance()
            return .literal(.number(text), token.range)
        case .plus, .minus:
            let next = try peek(1)
            guard case .number(let text) = next.kind, next.scalarRange.lowerBound == token.scalarRange.upperBound else {
                try unsupported("arithmetic expressions", at: token)
            }
            try advance()
            try advance()
            return .literal(.number(token.kind == .minus ? "-" + text : text), token.range.union(next.range))
        case .keyword(let keyword):
            switch keyword {
            case .true, .yes:
                try advance()
                return .literal(.boolean(true), token.range)
            case .false, .no:
                try advance()
                return .literal(.boolean(false), token.range)
            case .nil, .null:
                try advance()
                return .literal(.null, token.range)
            case .self:
                try advance()
                return try parseKeyPathTail(base: .evaluatedObject, components: [], start: start)
            case .function where try peek(1).kind == .leftParen:
                try unsupported("FUNCTION() expressions", at: token)
            case .fetch where try peek(1).kind == .leftParen:
                try unsupported("FETCH() expressions", at: token)
            case .anyKey:
                try unsupported("ANYKEY", at: token)
            default:
                try fail(expected: expected, at: token, keyHint: true)
            }
        case .identifier(let name), .escapedIdentifier(let name):
            try advance()
            return try parseKeyPathTail(base: .evaluatedObject, components: [name], start: start)
        case .variable(let name):
            try advance()
            return try parseKeyPathTail(base: .variable(name), components: [], start: start)
        case .collectionOperator:
            let component = try parseCollectionOperator()
            return try parseKeyPathTail(base: .evaluatedObject, components: [component], start: start)
        default:
            try fail(expected: expected, at: token)
        }
    }

    /// `( expression )`.
    @inline(never)
    private mutating func parseParenthesizedExpression() throws(Failure) -> Expression {
        let open = try advance()
        try enter(open)
        defer { leave() }
        let inner = try parseExpression(expected: "expression")
        try expect(.rightParen, "')'")
        return inner
    }

    /// `.component` repeated after a key path's base.
    @inline(never)
    private mutating func parseKeyPathTail(base: KeyPathBase, components: [String], start: Int) throws(Failure) -> Expression {
        var components = components
        while try take(.dot) {
            let token = try peek()
            switch token.kind {
            case .identifier(let name), .escapedIdentifier(let name):
                try advance()
                components.append(name)
            case .collectionOperator:
                components.append(try parseCollectionOperator())
            default:
                try fail(expected: "key name", at: token, keyHint: true)
            }
        }
        return .keyPath(base, components, SourceRange(start: start, end: previousEnd))
    }

    /// `@count`, `@sum`, `@avg`, `@min`, `@max` (any case; stored in lower
    /// case with the `@`).
    @inline(never)
    private mutating func parseCollectionOperator() throws(Failure) -> String {
        let token = try advance()
        let name = source.text(of: token.scalarRange).dropFirst().lowercased()
        switch name {
        case "count", "sum", "avg", "min", "max":
            return "@" + name
        case "distinctunionofobjects", "unionofobjects", "distinctunionofarrays",
             "unionofarrays", "distinctunionofsets", "unionofsets":
            try unsupported("collection operator", at: token)
        default:
            try fail(expected: "collection operator @count, @sum, @avg, @min or @max", at: token)
        }
    }

    /// `name:(args)`, `name()`, or a multi-part name `add:to:(1, 2)` (the
    /// name's parts joined by `:`).
    @inline(never)
    private mutating func parseFunction() throws(Failure) -> Expression {
        let first = try advance()
        guard case .identifier(let name) = first.kind else { try fail(expected: "function name", at: first) }
        let start = first.range.start
        var parts = [name]
        while try take(.colon) {
            let next = try peek()
            if next.kind == .leftParen { break }
            if case .identifier(let part) = next.kind, try peek(1).kind == .colon {
                try advance()
                parts.append(part)
                continue
            }
            try failAfterFunctionName(parts, at: next)
        }
        let open = try expect(.leftParen, "'('")
        try enter(open)
        defer { leave() }
        var arguments: [Expression] = []
        if try !take(.rightParen) {
            while true {
                arguments.append(try parseExpression(expected: "function argument"))
                if try !take(.comma) { break }
            }
            try expect(.rightParen, "',' or ')'")
        }
        return .function(parts.joined(separator: ":"), arguments, SourceRange(start: start, end: previousEnd))
    }

    /// Throws "expected '(' after 'name:'".
    @inline(never)
    private func failAfterFunctionName(_ parts: [String], at token: Token) throws(Failure) -> Never {
        try fail(expected: "'(' after '\(parts.joined(separator: ":")):'", at: token)
    }

    /// `{a, b, …}`, possibly empty or nested.
    @inline(never)
    private mutating func parseArray() throws(Failure) -> Expression {
        let open = try advance()
        try enter(open)
        defer { leave() }
        var elements: [Expression] = []
        if try !take(.rightBrace) {
            while true {
                elements.append(try parseExpression(expected: "array element"))
                if try !take(.comma) { break }
            }
            try expect(.rightBrace, "',' or '}'")
        }
        return .array(elements, SourceRange(start: open.range.start, end: previousEnd))
    }

    /// `SUBQUERY(collection, $variable, predicate)` and any key path after it.
    @inline(never)
    private mutating func parseSubquery() throws(Failure) -> Expression {
        let keyword = try advance()
        try expect(.leftParen, "'(' after SUBQUERY")
        try enter(keyword)
        defer { leave() }
        let collection = try parseExpression(expected: "collection")
        try expect(.comma, "','")
        let variableToken = try peek()
        guard case .variable(let variable) = variableToken.kind else {
            try fail(expected: "variable ($name)", at: variableToken)
        }
        try advance()
        try expect(.comma, "','")
        let predicate = try parseOr()
        try expect(.rightParen, "AND, OR or ')'")
        let subquery = Subquery(collection: collection, variable: variable, predicate: predicate)
        return try parseKeyPathTail(base: .subquery(subquery), components: [], start: keyword.range.start)
    }

    /// `CAST(value, "Type")`.
    @inline(never)
    private mutating func parseCast() throws(Failure) -> Expression {
        let keyword = try advance()
        try expect(.leftParen, "'(' after CAST")
        try enter(keyword)
        defer { leave() }
        let value = try parseExpression(expected: "expression")
        try expect(.comma, "','")
        let typeToken = try peek()
        guard case .string(let type) = typeToken.kind else {
            try fail(expected: "type name string (such as \"NSDate\")", at: typeToken)
        }
        try advance()
        try expect(.rightParen, "')'")
        return .cast(value, type, SourceRange(start: keyword.range.start, end: previousEnd))
    }
}
