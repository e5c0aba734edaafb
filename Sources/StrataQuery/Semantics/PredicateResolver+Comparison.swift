import Foundation
import StrataModel

extension PredicateResolver {
    // MARK: Comparisons

    func resolveComparison(_ comparison: Comparison, in scope: inout Scope) throws -> QueryPredicate {
        var lhs = try term(comparison.lhs, in: &scope)
        var rhs = try term(comparison.rhs, in: &scope)
        var (lhsExpression, rhsExpression) = (comparison.lhs, comparison.rhs)
        var op = comparison.op
        let range = comparison.range

        // `{1, 2} CONTAINS x` is `x IN {1, 2}`.
        if op == .contains, case .list = lhs {
            swap(&lhs, &rhs)
            swap(&lhsExpression, &rhsExpression)
            op = .in
        }

        if let quantifier = comparison.quantifier {
            switch lhs {
            case .collection(let path, let rest, let destination):
                return try quantified(quantifier, path: path, rest: rest, destination: destination, op: op, rhs: rhs, options: comparison.options, range: range, scope: scope)
            case .typed, .unknown:
                return .constant(false)
            default:
                throw PositionedError(code: .predicateType, message: "\(quantifier.rawValue) needs a key path through a to-many relationship on its left", range: comparison.lhs.range)
            }
        }

        switch (lhs, rhs) {
        case (.collection(let path, let rest, let destination), _):
            // Implicit ANY; `toMany.key CONTAINS value` is membership.
            let innerOp: ComparisonOperator = op == .contains && !isList(rhs) ? .equal : op
            let options = op == .contains ? [] : comparison.options
            return try quantified(.any, path: path, rest: rest, destination: destination, op: innerOp, rhs: rhs, options: options, range: range, scope: scope)
        case (_, .collection(let path, let rest, let destination)):
            guard op == .in else {
                throw PositionedError(code: .predicateType, message: "a to-many key path on the right is supported only with IN", range: comparison.rhs.range)
            }
            return try quantified(.any, path: path, rest: rest, destination: destination, op: .equal, rhs: lhs, options: comparison.options, range: range, scope: scope)
        default:
            let resolved = try makeComparison(lhs, op, rhs, options: comparison.options, range: range, lhsRange: comparison.lhs.range, rhsRange: comparison.rhs.range)
            return Self.namingVariables(resolved, lhs: lhsExpression, rhs: rhsExpression, scope: scope)
        }
    }

    /// `resolved` with each constant side that was written as exactly
    /// `$NAME` (a bound variable, not a SUBQUERY's) naming its variable
    /// (``QueryComparison/lhsVariable``, ``QueryComparison/rhsVariable``).
    private static func namingVariables(_ resolved: QueryPredicate, lhs: Expression, rhs: Expression, scope: Scope) -> QueryPredicate {
        guard case .compare(var comparison) = resolved, case .resolve = scope.mode else { return resolved }
        func variable(_ expression: Expression, _ operand: QueryOperand) -> VariableUse? {
            guard case .keyPath(.variable(let name), let components, let range) = expression, components.isEmpty,
                  name != scope.subqueryVariable, case .constant = operand else { return nil }
            return VariableUse(name: name, range: range)
        }
        comparison.lhsVariable = variable(lhs, comparison.lhs)
        comparison.rhsVariable = variable(rhs, comparison.rhs)
        return .compare(comparison)
    }

    private func isList(_ term: Term) -> Bool {
        if case .list = term { return true }
        return false
    }

    /// `quantifier path.rest op rhs`, with `rest` relative to each destination.
    private func quantified(
        _ quantifier: Quantifier,
        path: CollectionPath,
        rest: [String],
        destination: String,
        op: ComparisonOperator,
        rhs: Term,
        options: StringComparisonOptions,
        range: SourceRange,
        scope: Scope
    ) throws -> QueryPredicate {
        switch rhs {
        case .constant, .list, .typed, .unknown: break
        default:
            throw PositionedError(code: .unsupported, message: "comparing a to-many key path with another key path is not supported; use SUBQUERY", range: range)
        }
        let inner = try resolveKeyPath(rest, from: destination, range: range)
        let innerPredicate: QueryPredicate
        switch inner {
        case .collection(let innerPath, let innerRest, let innerDestination):
            // Nested to-many: ALL stays ALL; ANY and NONE look for any match below.
            let nested: Quantifier = quantifier == .all ? .all : .any
            innerPredicate = try quantified(nested, path: innerPath, rest: innerRest, destination: innerDestination, op: op, rhs: rhs, options: options, range: range, scope: scope)
        default:
            innerPredicate = try makeComparison(inner, op, rhs, options: options, range: range, lhsRange: range, rhsRange: range)
        }
        return .quantified(quantifier, path, innerPredicate)
    }

    /// A comparison of two scalar sides (or a scalar and a list for IN / BETWEEN).
    func makeComparison(
        _ lhs: Term,
        _ op: ComparisonOperator,
        _ rhs: Term,
        options: StringComparisonOptions,
        range: SourceRange,
        lhsRange: SourceRange,
        rhsRange: SourceRange
    ) throws -> QueryPredicate {
        let lhsSide = try side(lhs, range: lhsRange)
        let rhsElements: [Side]
        switch op {
        case .in, .between:
            switch rhs {
            case .list(let constants):
                rhsElements = constants.map { .constant($0) }
            case .constant(.value(.null)):
                // `x IN nil` holds for nothing.
                return .constant(false)
            case .typed, .unknown:
                rhsElements = []
            default:
                throw PositionedError(code: .predicateType, message: "\(op.rawValue) needs a list on its right, like {1, 2}", range: rhsRange)
            }
            if op == .between, case .list(let constants) = rhs, constants.count != 2 {
                throw PositionedError(code: .predicateType, message: "BETWEEN needs exactly two bounds, like {1, 10}; found \(constants.count)", range: rhsRange)
            }
        default:
            rhsElements = [try side(rhs, range: rhsRange)]
        }

        // Model-load checks with untyped variables: check what can be checked.
        let sides = [lhsSide] + rhsElements
        if sides.contains(where: { if case .unknown = $0 { return true } else { return false } }) {
            return .constant(false)
        }

        let domain = try self.domain(for: sides, op: op, range: range)
        try checkOperator(op, domain: domain, options: options, range: range)

        func convert(_ side: Side, range: SourceRange) throws -> QueryOperand {
            switch side {
            case .operand(let operand, _): return operand
            case .constant(let constant): return .constant(try Self.coerce(constant, to: domain, range: range))
            case .typed: return .constant(.null)
            case .unknown: return .constant(.null)
            }
        }

        let left = try convert(lhsSide, range: lhsRange)
        let right: QueryOperand
        switch op {
        case .in, .between:
            if rhsElements.contains(where: { if case .typed = $0 { return true } else { return false } }) {
                return .constant(false)
            }
            right = .list(try rhsElements.map {
                guard case .constant(let constant) = $0 else {
                    throw PositionedError(code: .unsupported, message: "\(op.rawValue) supports only constant lists", range: rhsRange)
                }
                return try Self.coerce(constant, to: domain, range: rhsRange)
            })
        default:
            right = try convert(rhsElements[0], range: rhsRange)
        }
        if case .typed = lhsSide { return .constant(false) }
        if case .typed = rhsElements.first { return .constant(false) }

        if op == .matches, case .constant(.string(let pattern)) = right {
            do {
                _ = try NSRegularExpression(pattern: pattern)
            } catch {
                throw PositionedError(code: .predicateType, message: "MATCHES pattern \"\(pattern)\" is not a valid regular expression", range: rhsRange)
            }
        }
        return .compare(QueryComparison(lhs: left, op: op, rhs: right, domain: domain, options: options))
    }

    /// A scalar side of a comparison.
    enum Side {
        case operand(QueryOperand, Kind)
        case constant(Constant)
        case typed(Kind)
        case unknown

        var kind: Kind? {
            switch self {
            case .operand(_, let kind), .typed(let kind): kind
            case .constant(let constant): constant.kind
            case .unknown: nil
            }
        }

        var isConstant: Bool {
            if case .constant = self { return true }
            return false
        }
    }

    private func side(_ term: Term, range: SourceRange) throws -> Side {
        switch term {
        case .operand(let operand, let kind): return .operand(operand, kind)
        case .constant(let constant): return .constant(constant)
        case .typed(let kind): return .typed(kind)
        case .unknown: return .unknown
        case .list:
            throw PositionedError(code: .predicateType, message: "a list is only allowed on the right of IN or BETWEEN", range: range)
        case .collection:
            throw PositionedError(code: .predicateType, message: "a to-many key path is not a single value here", range: range)
        }
    }

    // MARK: Domains

    /// The domain all sides are compared in, or a type error.
    private func domain(for sides: [Side], op: ComparisonOperator, range: SourceRange) throws -> ComparisonDomain {
        let kinds = sides.compactMap(\.kind).filter { $0 != .null }
        guard let first = kinds.first else {
            // nil compared with nil.
            return .integer
        }
        // Property kinds are fixed; constants adapt. Prefer a non-constant side to lead.
        let lead = sides.first(where: { !$0.isConstant && $0.kind != nil && $0.kind != .null })?.kind ?? first

        func mismatch(_ other: Kind) -> PositionedError {
            var message = "cannot compare a \(lead.name) value with a \(other.name) value"
            if lead == .date, other.isNumeric {
                message += " (write a date as CAST(seconds since 2001, \"NSDate\"))"
            }
            return PositionedError(code: .predicateType, message: message, range: range)
        }

        if lead.isNumeric {
            var domain: ComparisonDomain = lead == .decimal ? .decimal : (lead == .double ? .double : .integer)
            for side in sides {
                guard let kind = side.kind, kind != .null else { continue }
                guard kind.isNumeric else { throw mismatch(kind) }
                switch kind {
                case .decimal: domain = .decimal
                case .double where domain == .integer: domain = .double
                default: break
                }
            }
            return domain
        }

        for side in sides {
            guard let kind = side.kind, kind != .null, kind != lead else { continue }
            switch (lead, kind, side.isConstant) {
            case (.uuid, .string, true), (.uri, .string, true):
                continue
            case (.object(let a), .object(let b), _):
                guard model.isEntity(b, kindOf: a) || model.isEntity(a, kindOf: b) else {
                    throw PositionedError(code: .predicateType, message: "cannot compare a '\(a)' object with a '\(b)' object", range: range)
                }
            default:
                throw mismatch(kind)
            }
        }
        switch lead {
        case .string: return .string
        case .date: return .date
        case .binary: return .binary
        case .uuid: return .uuid
        case .uri: return .uri
        case .object: return .object
        case .opaque:
            guard op == .equal || op == .notEqual, sides.allSatisfy({ $0.kind == .opaque || $0.kind == .null }) else {
                throw PositionedError(code: .predicateType, message: "values of this attribute can only be compared with nil", range: range)
            }
            return .binary
        default:
            throw mismatch(lead)
        }
    }

    private func checkOperator(_ op: ComparisonOperator, domain: ComparisonDomain, options: StringComparisonOptions, range: SourceRange) throws {
        if !options.isEmpty, domain != .string {
            throw PositionedError(code: .predicateType, message: "[c] and [d] apply only to string comparisons", range: range)
        }
        switch op {
        case .beginsWith, .endsWith, .like, .matches, .contains:
            guard domain == .string else {
                throw PositionedError(code: .predicateType, message: "\(op.rawValue) applies only to strings", range: range)
            }
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .between:
            guard domain != .object else {
                throw PositionedError(code: .predicateType, message: "objects have no order: \(op.rawValue) cannot compare them", range: range)
            }
        case .equal, .notEqual, .in:
            break
        }
    }

    // MARK: Constants

    /// Converts a constant to a domain, exactly.
    static func coerce(_ constant: Constant, to domain: ComparisonDomain, range: SourceRange) throws -> PropertyValue {
        func fail(_ what: String) -> PositionedError {
            PositionedError(code: .predicateType, message: "\(what) does not fit a \(domain) comparison", range: range)
        }
        if case .value(.null) = constant { return .null }
        switch domain {
        case .integer:
            switch constant {
            case .number(let text):
                if let value = Int64(text) { return .integer(value) }
                throw fail("number \(text)")
            case .value(.integer(let v)): return .integer(v)
            case .value(.boolean(let b)): return .integer(b ? 1 : 0)
            case .value(let v): throw fail("\(v)")
            }
        case .double:
            switch constant {
            case .number(let text):
                if let value = Double(text) { return .double(value) }
                throw fail("number \(text)")
            case .value(.integer(let v)): return .double(Double(v))
            case .value(.double(let v)): return .double(v)
            case .value(.boolean(let b)): return .double(b ? 1 : 0)
            case .value(let v): throw fail("\(v)")
            }
        case .decimal:
            switch constant {
            case .number(let text):
                if let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN { return .decimal(value) }
                throw fail("number \(text)")
            case .value(.integer(let v)): return .decimal(Decimal(v))
            case .value(.double(let v)):
                guard v.isFinite, let value = Decimal(string: "\(v)", locale: Locale(identifier: "en_US_POSIX")) else { throw fail("\(v)") }
                return .decimal(value)
            case .value(.decimal(let v)): return .decimal(v)
            case .value(.boolean(let b)): return .decimal(b ? 1 : 0)
            case .value(let v): throw fail("\(v)")
            }
        case .string:
            if case .value(.string(let s)) = constant { return .string(s) }
            throw fail(description(of: constant))
        case .date:
            if case .value(.date(let d)) = constant { return .date(d) }
            throw fail(description(of: constant))
        case .binary:
            if case .value(.binary(let d)) = constant { return .binary(d) }
            throw fail(description(of: constant))
        case .uuid:
            switch constant {
            case .value(.uuid(let u)): return .uuid(u)
            case .value(.string(let s)):
                guard let uuid = UUID(uuidString: s) else {
                    throw PositionedError(code: .predicateType, message: "\"\(s)\" is not a UUID", range: range)
                }
                return .uuid(uuid)
            default: throw fail(description(of: constant))
            }
        case .uri:
            switch constant {
            case .value(.uri(let u)), .value(.string(let u)): return .uri(u)
            default: throw fail(description(of: constant))
            }
        case .object:
            if case .value(.object(let id)) = constant { return .object(id) }
            throw fail(description(of: constant))
        }
    }

    private static func description(of constant: Constant) -> String {
        switch constant {
        case .number(let text): "number \(text)"
        case .value(let value): "\(Kind(value).name) value \(value)"
        }
    }
}
