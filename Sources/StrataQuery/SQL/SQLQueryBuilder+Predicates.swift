import Foundation
import StrataModel

extension SQLQueryBuilder {
    /// A condition that is always `value`.
    func bool(_ value: Bool) -> SQLFragment {
        SQLFragment(value ? dialect.trueLiteral : dialect.falseLiteral)
    }

    /// A predicate as an SQL condition. It may evaluate to NULL only where
    /// NULL means false (ordering comparisons with a NULL side): `NOT` wraps
    /// its operand in `COALESCE(…, false)`.
    func predicate(_ predicate: QueryPredicate, _ scope: SQLScope) throws(StrataError) -> SQLFragment {
        switch predicate {
        case .constant(let value):
            return bool(value)
        case .not(let inner):
            let operand = try self.predicate(inner, scope)
            return "NOT COALESCE(" + operand + ", \(dialect.falseLiteral))"
        case .and(let parts):
            guard !parts.isEmpty else { return bool(true) }
            var compiled: [SQLFragment] = []
            for part in parts { compiled.append(try self.predicate(part, scope)) }
            return SQLFragment.balanced(compiled[...], separator: " AND ")
        case .or(let parts):
            guard !parts.isEmpty else { return bool(false) }
            return SQLFragment.balanced(try disjunction(parts, scope)[...], separator: " OR ")
        case .compare(let comparison):
            return try self.comparison(comparison, scope)
        case .quantified(let quantifier, let path, let inner):
            guard let source = try collection(path, scope) else {
                return bool(quantifier != .any)
            }
            // Compile the inner predicate first: it adds the joins its key
            // paths need to the destination scope's FROM clause.
            var condition = try self.predicate(inner, source.scope)
            if quantifier == .all { condition = "NOT COALESCE(" + condition + ", \(dialect.falseLiteral))" }
            let subquery = "(SELECT 1 FROM " + source.scope.fromClause() + " WHERE \(source.link) AND " + condition + ")"
            return (quantifier == .any ? "EXISTS " : "NOT EXISTS ") + subquery
        }
    }

    /// The alternatives of an OR: equalities of one stored value with
    /// constants become one `IN (…)` (`pages == 1 OR pages == 2` is
    /// `pages IN (1, 2)`), which an index serves in one pass and SQLite
    /// plans in time linear in the constants (thousands of OR-ed terms are
    /// otherwise planned one by one); everything else is compiled as is.
    func disjunction(_ parts: [QueryPredicate], _ scope: SQLScope) throws(StrataError) -> [SQLFragment] {
        var compiled: [SQLFragment] = []
        var groups: [String: (lhs: SQLFragment, members: [SQLFragment])] = [:]
        var order: [String] = []
        for part in parts {
            if case .compare(let comparison) = part, comparison.op == .equal, comparison.domain != .object,
               case .attribute = comparison.lhs, case .constant(let value) = comparison.rhs, !value.isNull {
                try OperandTyping.check(comparison)
                let options = (comparison.domain == .string || comparison.domain == .uri) ? comparison.options : []
                if let lhs = try operand(comparison.lhs, comparison.domain, options, scope), lhs.arguments.isEmpty,
                   let member = try side(.constant(value), variable: comparison.rhsVariable, comparison.domain, options, scope) {
                    if groups[lhs.sql] == nil {
                        groups[lhs.sql] = (lhs, [])
                        order.append(lhs.sql)
                    }
                    groups[lhs.sql]?.members.append(member)
                    continue
                }
            }
            compiled.append(try predicate(part, scope))
        }
        for key in order {
            guard let group = groups[key] else { continue }
            if group.members.count == 1 {
                compiled.append((group.lhs + dialect.nullSafeEqual + group.members[0]).parenthesized)
            } else {
                compiled.append((group.lhs + " IN (" + SQLFragment.joined(group.members, separator: ", ") + ")").parenthesized)
            }
        }
        return compiled
    }

    // MARK: - Comparisons

    /// A comparison, checked by ``OperandTyping/check(_:)`` first.
    func comparison(_ comparison: QueryComparison, _ scope: SQLScope) throws(StrataError) -> SQLFragment {
        try OperandTyping.check(comparison)
        let domain = comparison.domain
        if domain == .object { return try objectComparison(comparison, scope) }
        let options = (domain == .string || domain == .uri) ? comparison.options : []
        let null = SQLFragment("NULL")
        switch comparison.op {
        case .equal, .notEqual:
            // The same SQL for any non-nil value: a variable's is a parameter.
            let lhs = try side(comparison.lhs, variable: comparison.lhsVariable, domain, options, scope) ?? null
            let rhs = try side(comparison.rhs, variable: comparison.rhsVariable, domain, options, scope) ?? null
            return (lhs + (comparison.op == .equal ? dialect.nullSafeEqual : dialect.nullSafeNotEqual) + rhs).parenthesized
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            if domain == .string || domain == .uri {
                // The SQL depends on the constant (U+0000 in it): no parameter.
                guard let lhs = try operand(comparison.lhs, domain, options, scope),
                      let rhs = try operand(comparison.rhs, domain, options, scope) else { return bool(false) }
                return stringOrdering(lhs, comparison.op.rawValue, rhs, constantSide: Self.constantSide(comparison))
            }
            guard let lhs = try side(comparison.lhs, variable: comparison.lhsVariable, domain, options, scope),
                  let rhs = try side(comparison.rhs, variable: comparison.rhsVariable, domain, options, scope) else { return bool(false) }
            return (lhs + " \(comparison.op.rawValue) " + rhs).parenthesized
        case .between:
            guard case .list(let bounds) = comparison.rhs, bounds.count == 2,
                  let low = try constant(bounds[0], domain, options),
                  let high = try constant(bounds[1], domain, options),
                  let lhs = try operand(comparison.lhs, domain, options, scope) else { return bool(false) }
            if domain == .string || domain == .uri {
                return (stringOrdering(lhs, ">=", low, constantSide: .right) + " AND " + stringOrdering(lhs, "<=", high, constantSide: .right)).parenthesized
            }
            return (lhs + " BETWEEN " + low + " AND " + high).parenthesized
        case .in:
            guard case .list(let values) = comparison.rhs else { return bool(false) }
            var members: [SQLFragment] = []
            var hasNil = false
            for value in values {
                if let member = try constant(value, domain, options) { members.append(member) } else { hasNil = true }
            }
            guard let lhs = try operand(comparison.lhs, domain, options, scope) else {
                return bool(hasNil)
            }
            var alternatives: [SQLFragment] = []
            if !members.isEmpty { alternatives.append(lhs + " IN (" + SQLFragment.joined(members, separator: ", ") + ")") }
            if hasNil { alternatives.append(lhs + " IS NULL") }
            guard !alternatives.isEmpty else { return bool(false) }
            return SQLFragment.joined(alternatives, separator: " OR ").parenthesized
        case .beginsWith, .endsWith, .contains:
            guard let op = StringOperators.Operator(comparison.op),
                  let lhs = try operand(comparison.lhs, domain, options, scope),
                  let rhs = try operand(comparison.rhs, domain, options, scope) else { return bool(false) }
            return try dialect.stringOperator(op, lhs, rhs)
        case .like:
            guard let lhs = try operand(comparison.lhs, domain, [], scope),
                  let rhs = try operand(comparison.rhs, domain, options, scope) else { return bool(false) }
            return try dialect.like(lhs, rhs, options: options)
        case .matches:
            let caseInsensitive = comparison.options.contains(.caseInsensitive)
            let subjectOptions = comparison.options.intersection(.diacriticInsensitive)
            if case .constant(let value) = comparison.rhs, let pattern = DomainValue.text(value) {
                try RegexCache.validate(pattern, caseInsensitive: caseInsensitive)
            }
            guard let lhs = try operand(comparison.lhs, domain, subjectOptions, scope),
                  let rhs = try operand(comparison.rhs, domain, [], scope) else { return bool(false) }
            return try dialect.matches(lhs, rhs, caseInsensitive: caseInsensitive)
        }
    }

    // MARK: - Strings

    /// Which side of a comparison is a constant, if exactly one is.
    static func constantSide(_ comparison: QueryComparison) -> SQLConstantSide {
        switch (comparison.lhs, comparison.rhs) {
        case (.constant, .constant): .neither
        case (_, .constant): .right
        case (.constant, _): .left
        default: .neither
        }
    }

    /// `lhs op rhs` for strings, in the evaluator's order (the dialect's).
    func stringOrdering(_ lhs: SQLFragment, _ op: String, _ rhs: SQLFragment, constantSide: SQLConstantSide) -> SQLFragment {
        dialect.stringOrdering(lhs, op, rhs, constantSide: constantSide)
    }

    // MARK: - Objects

    private enum ObjectSide {
        case null
        case constant(ObjectIdentity)
        case column(String, root: String)
    }

    private func objectSide(_ operand: QueryOperand, _ scope: SQLScope) throws(StrataError) -> ObjectSide {
        switch operand {
        case .constant(.object(let id)):
            return .constant(ObjectIdentity(root: schema.model.rootEntityName(of: id.entityName), key: id.key))
        case .constant:
            return .null
        case .object(let steps):
            guard let key = try objectKey(steps, scope) else { return .null }
            return .column(key, root: schema.model.rootEntityName(of: steps.last?.destinationEntity ?? scope.entity))
        default:
            throw StrataError(.predicateType, "\(OperandTyping.describe(operand)) is not an object")
        }
    }

    private func objectEquality(_ a: ObjectSide, _ b: ObjectSide) -> SQLFragment {
        switch (a, b) {
        case (.null, .null):
            return bool(true)
        case (.null, .constant), (.constant, .null):
            return bool(false)
        case (.null, .column(let e, _)), (.column(let e, _), .null):
            return SQLFragment("(\(e) IS NULL)")
        case (.constant(let x), .constant(let y)):
            return bool(x == y)
        case (.column(let e, let root), .constant(let identity)), (.constant(let identity), .column(let e, let root)):
            guard identity.root == root, case .permanent(let pk) = identity.key else { return bool(false) }
            return "(\(e)\(dialect.nullSafeEqual)" + SQLFragment.bind(.integer(pk)) + ")"
        case (.column(let e1, let r1), .column(let e2, let r2)):
            return SQLFragment(r1 == r2 ? "(\(e1)\(dialect.nullSafeEqual)\(e2))" : "(\(e1) IS NULL AND \(e2) IS NULL)")
        }
    }

    private func objectComparison(_ comparison: QueryComparison, _ scope: SQLScope) throws(StrataError) -> SQLFragment {
        let lhs = try objectSide(comparison.lhs, scope)
        switch comparison.op {
        case .equal:
            return objectEquality(lhs, try objectSide(comparison.rhs, scope))
        case .notEqual:
            return "NOT " + objectEquality(lhs, try objectSide(comparison.rhs, scope))
        case .in:
            guard case .list(let values) = comparison.rhs else { return bool(false) }
            var identities: [ObjectIdentity] = []
            var hasNil = false
            for value in values {
                if case .object(let id) = value {
                    identities.append(ObjectIdentity(root: schema.model.rootEntityName(of: id.entityName), key: id.key))
                } else {
                    hasNil = true
                }
            }
            switch lhs {
            case .null:
                return bool(hasNil)
            case .constant(let identity):
                return bool(identities.contains(identity))
            case .column(let e, let root):
                var keys: [SQLFragment] = []
                for identity in identities where identity.root == root {
                    if case .permanent(let pk) = identity.key { keys.append(.bind(.integer(pk))) }
                }
                var alternatives: [SQLFragment] = []
                if !keys.isEmpty { alternatives.append("\(e) IN (" + SQLFragment.joined(keys, separator: ", ") + ")") }
                if hasNil { alternatives.append(SQLFragment("\(e) IS NULL")) }
                guard !alternatives.isEmpty else { return bool(false) }
                return SQLFragment.joined(alternatives, separator: " OR ").parenthesized
            }
        default:
            throw StrataError(.predicateType, "objects can only be compared with ==, != and IN")
        }
    }
}
