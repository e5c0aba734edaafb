import Foundation
import StrataModel

/// Comparisons of model values in a ``ComparisonDomain``, compiled into
/// closures over ``PropertyValue``.
///
/// These closures are deliberately not generic: they are built here, in a
/// non-generic context, so the optimiser specialises every per-domain
/// helper (no runtime generic metadata in the per-object path, whatever the
/// evaluator's accessor type), and the evaluator only wraps them in thin
/// closures that read the operands.
enum ValueTests {
    /// A test of one value against a constant compiled in.
    typealias Unary = (PropertyValue) throws(StrataError) -> Bool
    /// A test of two values.
    typealias Binary = (PropertyValue, PropertyValue) throws(StrataError) -> Bool

    // MARK: - Entry points

    /// `value op constant` (or `constant op value` when `constantOnRight`
    /// is false), for every operator but `IN` and `BETWEEN`.
    static func unary(_ op: ComparisonOperator, _ domain: ComparisonDomain, _ options: StringComparisonOptions, constant: PropertyValue, constantOnRight: Bool) throws(StrataError) -> Unary {
        switch domain {
        case .integer:
            return ordered(op, constant: DomainValue.integer(constant), right: constantOnRight, extract: { DomainValue.integer($0) }, compare: { ValueComparison.compare($0, $1) }, equal: ==)
        case .double:
            return ordered(op, constant: DomainValue.double(constant), right: constantOnRight, extract: { DomainValue.double($0) }, compare: { ValueComparison.compare($0, $1) }, equal: ==)
        case .date:
            return ordered(op, constant: DomainValue.date(constant), right: constantOnRight, extract: { DomainValue.date($0) }, compare: { ValueComparison.compare($0, $1) }, equal: ==)
        case .decimal:
            return ordered(op, constant: DomainValue.decimal(constant), right: constantOnRight, extract: { DomainValue.decimal($0) }, compare: { ValueComparison.compare($0, $1) }, equal: ==)
        case .binary:
            return ordered(op, constant: data(constant), right: constantOnRight, extract: data, compare: { ValueComparison.compare($0, $1) }, equal: ==)
        case .uuid:
            return ordered(op, constant: uuid(constant), right: constantOnRight, extract: uuid, compare: { ValueComparison.compare($0, $1) }, equal: ==)
        case .string, .uri:
            return try stringUnary(op, options, constant: constant, right: constantOnRight)
        case .object:
            throw StrataError(.predicateType, "objects are not compared as values")
        }
    }

    /// `lhs op rhs` for two values, for every operator but `IN` and `BETWEEN`.
    static func binary(_ op: ComparisonOperator, _ domain: ComparisonDomain, _ options: StringComparisonOptions) throws(StrataError) -> Binary {
        switch domain {
        case .integer:
            return ordered(op, extract: { DomainValue.integer($0) }, compare: { ValueComparison.compare($0, $1) })
        case .double:
            return ordered(op, extract: { DomainValue.double($0) }, compare: { ValueComparison.compare($0, $1) })
        case .date:
            return ordered(op, extract: { DomainValue.date($0) }, compare: { ValueComparison.compare($0, $1) })
        case .decimal:
            return ordered(op, extract: { DomainValue.decimal($0) }, compare: { ValueComparison.compare($0, $1) })
        case .binary:
            return ordered(op, extract: data, compare: { ValueComparison.compare($0, $1) })
        case .uuid:
            return ordered(op, extract: uuid, compare: { ValueComparison.compare($0, $1) })
        case .string, .uri:
            return try stringBinary(op, options)
        case .object:
            throw StrataError(.predicateType, "objects are not compared as values")
        }
    }

    /// `value IN {values}`: true when `value == ` some member; a nil value
    /// is in the list when the list holds nil.
    static func membership(_ domain: ComparisonDomain, _ options: StringComparisonOptions, _ values: [PropertyValue]) throws(StrataError) -> Unary {
        switch domain {
        case .integer:
            return members(values, extract: { DomainValue.integer($0) }, equal: ==)
        case .double:
            return members(values, extract: { DomainValue.double($0) }, equal: ==)
        case .date:
            return members(values, extract: { DomainValue.date($0) }, equal: ==)
        case .decimal:
            return members(values, extract: { DomainValue.decimal($0) }, equal: ==)
        case .binary:
            return members(values, extract: data, equal: ==)
        case .uuid:
            return members(values, extract: uuid, equal: ==)
        case .string, .uri:
            return members(values, extract: folded(options), equal: { ValueComparison.equal($0, $1) })
        case .object:
            throw StrataError(.predicateType, "objects are not compared as values")
        }
    }

    /// `value BETWEEN {low, high}` (inclusive; false when any is nil).
    static func between(_ domain: ComparisonDomain, _ options: StringComparisonOptions, _ low: PropertyValue, _ high: PropertyValue) throws(StrataError) -> Unary {
        switch domain {
        case .integer:
            return range(low, high, extract: { DomainValue.integer($0) }, compare: { ValueComparison.compare($0, $1) })
        case .double:
            return range(low, high, extract: { DomainValue.double($0) }, compare: { ValueComparison.compare($0, $1) })
        case .date:
            return range(low, high, extract: { DomainValue.date($0) }, compare: { ValueComparison.compare($0, $1) })
        case .decimal:
            return range(low, high, extract: { DomainValue.decimal($0) }, compare: { ValueComparison.compare($0, $1) })
        case .binary:
            return range(low, high, extract: data, compare: { ValueComparison.compare($0, $1) })
        case .uuid:
            return range(low, high, extract: uuid, compare: { ValueComparison.compare($0, $1) })
        case .string, .uri:
            return range(low, high, extract: folded(options), compare: { ValueComparison.compare($0, $1) })
        case .object:
            throw StrataError(.predicateType, "objects are not compared as values")
        }
    }

    // MARK: - Extraction

    static func data(_ value: PropertyValue) -> Data? {
        if case .binary(let data) = value { return data }
        return nil
    }

    static func uuid(_ value: PropertyValue) -> UUID? {
        if case .uuid(let uuid) = value { return uuid }
        return nil
    }

    /// Text folded with `options`, stored contiguously (Foundation's folding
    /// can return bridged strings, which would be copied on every access).
    static func folded(_ options: StringComparisonOptions) -> @Sendable (PropertyValue) -> String? {
        if options.isEmpty { return { DomainValue.text($0) } }
        return { value in
            guard let text = DomainValue.text(value) else { return nil }
            var result = StringFolding.fold(text, options)
            result.makeContiguousUTF8()
            return result
        }
    }

    // MARK: - Ordered domains

    /// The operator seen from the other side (`c < x` is `x > c`).
    private static func flipped(_ op: ComparisonOperator) -> ComparisonOperator {
        switch op {
        case .lessThan: .greaterThan
        case .lessThanOrEqual: .greaterThanOrEqual
        case .greaterThan: .lessThan
        case .greaterThanOrEqual: .lessThanOrEqual
        default: op
        }
    }

    private static func ordered<T>(
        _ op: ComparisonOperator,
        constant: T?,
        right: Bool,
        extract: @escaping (PropertyValue) -> T?,
        compare: @escaping (T, T) -> Int,
        equal: @escaping (T, T) -> Bool
    ) -> Unary {
        let op = right ? op : flipped(op)
        guard let c = constant else {
            // Nil constant: only == and != can be true.
            switch op {
            case .equal: return { extract($0) == nil }
            case .notEqual: return { extract($0) != nil }
            default: return { _ in false }
            }
        }
        switch op {
        case .equal: return { v in extract(v).map { equal($0, c) } ?? false }
        case .notEqual: return { v in extract(v).map { !equal($0, c) } ?? true }
        case .lessThan: return { v in extract(v).map { compare($0, c) < 0 } ?? false }
        case .lessThanOrEqual: return { v in extract(v).map { compare($0, c) <= 0 } ?? false }
        case .greaterThan: return { v in extract(v).map { compare($0, c) > 0 } ?? false }
        case .greaterThanOrEqual: return { v in extract(v).map { compare($0, c) >= 0 } ?? false }
        default: return { _ in false }
        }
    }

    private static func ordered<T>(_ op: ComparisonOperator, extract: @escaping (PropertyValue) -> T?, compare: @escaping (T, T) -> Int) -> Binary {
        func test(_ accept: @escaping (Int) -> Bool) -> Binary {
            { a, b in
                guard let x = extract(a), let y = extract(b) else { return false }
                return accept(compare(x, y))
            }
        }
        switch op {
        case .equal:
            return { a, b in
                switch (extract(a), extract(b)) {
                case (nil, nil): return true
                case let (x?, y?): return compare(x, y) == 0
                default: return false
                }
            }
        case .notEqual:
            return { a, b in
                switch (extract(a), extract(b)) {
                case (nil, nil): return false
                case let (x?, y?): return compare(x, y) != 0
                default: return true
                }
            }
        case .lessThan: return test { $0 < 0 }
        case .lessThanOrEqual: return test { $0 <= 0 }
        case .greaterThan: return test { $0 > 0 }
        case .greaterThanOrEqual: return test { $0 >= 0 }
        default: return { _, _ in false }
        }
    }

    private static func members<T>(_ values: [PropertyValue], extract: @escaping (PropertyValue) -> T?, equal: @escaping (T, T) -> Bool) -> Unary {
        let members = values.compactMap(extract)
        let hasNil = values.contains { extract($0) == nil }
        return { v in
            guard let x = extract(v) else { return hasNil }
            for member in members where equal(x, member) { return true }
            return false
        }
    }

    private static func range<T>(_ low: PropertyValue, _ high: PropertyValue, extract: @escaping (PropertyValue) -> T?, compare: @escaping (T, T) -> Int) -> Unary {
        guard let lo = extract(low), let hi = extract(high) else { return { _ in false } }
        return { v in
            guard let x = extract(v) else { return false }
            return compare(lo, x) <= 0 && compare(x, hi) <= 0
        }
    }

    // MARK: - Strings

    private static func stringUnary(_ op: ComparisonOperator, _ options: StringComparisonOptions, constant: PropertyValue, right: Bool) throws(StrataError) -> Unary {
        let fold = folded(options)
        switch op {
        case .beginsWith, .endsWith, .contains:
            guard let stringOp = StringOperators.Operator(op), let c = fold(constant) else { return { _ in false } }
            if right { return { v in fold(v).map { StringOperators.evaluate(stringOp, $0, c) } ?? false } }
            return { v in fold(v).map { StringOperators.evaluate(stringOp, c, $0) } ?? false }
        case .like:
            guard let c = fold(constant) else { return { _ in false } }
            if right {
                let pattern = LikePattern(c)
                return { v in fold(v).map { pattern.matches($0) } ?? false }
            }
            return { v in fold(v).map { LikePattern.matches(c, pattern: $0) } ?? false }
        case .matches:
            let caseInsensitive = options.contains(.caseInsensitive)
            let subjectFold = folded(options.intersection(.diacriticInsensitive))
            if right {
                guard let pattern = DomainValue.text(constant) else { return { _ in false } }
                let expression = try RegexCache.expression(pattern, caseInsensitive: caseInsensitive)
                return { v in subjectFold(v).map { RegexCache.matches($0, expression) } ?? false }
            }
            guard let subject = subjectFold(constant) else { return { _ in false } }
            return { v throws(StrataError) in
                guard let pattern = DomainValue.text(v) else { return false }
                return try RegexCache.matches(subject, pattern: pattern, caseInsensitive: caseInsensitive)
            }
        default:
            return ordered(op, constant: fold(constant), right: right, extract: fold, compare: { ValueComparison.compare($0, $1) }, equal: { ValueComparison.equal($0, $1) })
        }
    }

    private static func stringBinary(_ op: ComparisonOperator, _ options: StringComparisonOptions) throws(StrataError) -> Binary {
        let fold = folded(options)
        switch op {
        case .beginsWith, .endsWith, .contains:
            guard let stringOp = StringOperators.Operator(op) else { return { _, _ in false } }
            return { a, b in
                guard let subject = fold(a), let needle = fold(b) else { return false }
                return StringOperators.evaluate(stringOp, subject, needle)
            }
        case .like:
            return { a, b in
                guard let subject = fold(a), let pattern = fold(b) else { return false }
                return LikePattern.matches(subject, pattern: pattern)
            }
        case .matches:
            let caseInsensitive = options.contains(.caseInsensitive)
            let subjectFold = folded(options.intersection(.diacriticInsensitive))
            return { a, b throws(StrataError) in
                guard let subject = subjectFold(a), let pattern = DomainValue.text(b) else { return false }
                return try RegexCache.matches(subject, pattern: pattern, caseInsensitive: caseInsensitive)
            }
        default:
            return ordered(op, extract: fold, compare: { ValueComparison.compare($0, $1) })
        }
    }
}
