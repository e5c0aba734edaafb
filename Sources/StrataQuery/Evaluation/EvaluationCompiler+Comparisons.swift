import Foundation
import StrataModel

/// One compiled side of a comparison, already in the comparison's domain.
enum TypedOperand<Object, Value> {
    /// Known at compile time (nil for a nil constant).
    case constant(Value?)
    /// Read from each object.
    case dynamic((Object) throws(StrataError) -> Value?)

    /// The side as a closure.
    var getter: (Object) throws(StrataError) -> Value? {
        switch self {
        case .constant(let value): { _ in value }
        case .dynamic(let get): get
        }
    }
}

/// Object identity for `==`/`IN` on objects: a key within one inheritance
/// hierarchy (primary keys are unique per hierarchy table, and SQL compares
/// them the same way). The store identifier is not compared: a query runs
/// against one store's objects.
struct ObjectIdentity: Hashable, Sendable {
    /// The hierarchy's root entity.
    var root: String
    /// The permanent or temporary key.
    var key: ObjectID.Key
}

extension EvaluationCompiler {
    /// A comparison, checked by ``OperandTyping/check(_:)`` first. The value
    /// tests come from ``ValueTests`` (non-generic, fully specialised); the
    /// closures here only read operands.
    func comparison(_ comparison: QueryComparison, entity: String) throws(StrataError) -> Test {
        try OperandTyping.check(comparison)
        let domain = comparison.domain
        if domain == .object { return try object(comparison, entity: entity) }
        let options = (domain == .string || domain == .uri) ? comparison.options : []
        switch comparison.op {
        case .in:
            guard case .list(let values) = comparison.rhs else { return { _ in false } }
            let test = try ValueTests.membership(domain, options, values)
            return try apply(test, to: comparison.lhs, entity: entity)
        case .between:
            guard case .list(let bounds) = comparison.rhs, bounds.count == 2 else { return { _ in false } }
            let test = try ValueTests.between(domain, options, bounds[0], bounds[1])
            return try apply(test, to: comparison.lhs, entity: entity)
        default:
            switch (comparison.lhs, comparison.rhs) {
            case (.constant(let left), .constant(let right)):
                let result = try ValueTests.binary(comparison.op, domain, options)(left, right)
                return { _ in result }
            case (_, .constant(let right)):
                let test = try ValueTests.unary(comparison.op, domain, options, constant: right, constantOnRight: true)
                return try apply(test, to: comparison.lhs, entity: entity)
            case (.constant(let left), _):
                let test = try ValueTests.unary(comparison.op, domain, options, constant: left, constantOnRight: false)
                return try apply(test, to: comparison.rhs, entity: entity)
            default:
                let test = try ValueTests.binary(comparison.op, domain, options)
                let lhs = try value(comparison.lhs, entity: entity)
                let rhs = try value(comparison.rhs, entity: entity)
                return { object throws(StrataError) in try test(try lhs(object), try rhs(object)) }
            }
        }
    }

    /// Applies a value test to an operand read from each object; an
    /// attribute of the object itself is read directly (no extra closure).
    private func apply(_ test: @escaping ValueTests.Unary, to operand: QueryOperand, entity: String) throws(StrataError) -> Test {
        if case .attribute(let steps, let attribute) = operand, steps.isEmpty {
            let key = try accessor.attributeKey(attribute, entity: entity)
            let accessor = self.accessor
            return { object throws(StrataError) in try test(accessor.value(key, of: object)) }
        }
        let get = try value(operand, entity: entity)
        return { object throws(StrataError) in try test(try get(object)) }
    }

    /// Combines two sides with a test of their values.
    func relation<T>(_ lhs: TypedOperand<Object, T>, _ rhs: TypedOperand<Object, T>, _ test: @escaping (T?, T?) -> Bool) -> Test {
        switch (lhs, rhs) {
        case (.dynamic(let left), .constant(let right)):
            return { object throws(StrataError) in test(try left(object), right) }
        case (.constant(let left), .dynamic(let right)):
            return { object throws(StrataError) in test(left, try right(object)) }
        case (.dynamic(let left), .dynamic(let right)):
            return { object throws(StrataError) in test(try left(object), try right(object)) }
        case (.constant(let left), .constant(let right)):
            let result = test(left, right)
            return { _ in result }
        }
    }

    /// `IN`: the left side `==` some member (nil matches a nil member).
    func membership<T>(_ lhs: TypedOperand<Object, T>, members: [T], hasNil: Bool, equal: @escaping (T, T) -> Bool) -> Test {
        let get = lhs.getter
        return { object throws(StrataError) in
            guard let x = try get(object) else { return hasNil }
            for member in members where equal(x, member) { return true }
            return false
        }
    }

    // MARK: - Objects

    private func identity(_ operand: QueryOperand, entity: String) throws(StrataError) -> TypedOperand<Object, ObjectIdentity> {
        switch operand {
        case .constant(let value):
            guard case .object(let id) = value else { return .constant(nil) }
            return .constant(ObjectIdentity(root: root(of: id.entityName), key: id.key))
        case .object(let steps):
            let navigate = try navigation(steps)
            let root = self.root(of: steps.last?.destinationEntity ?? entity)
            let accessor = self.accessor
            return .dynamic { object in
                navigate(object).map { ObjectIdentity(root: root, key: accessor.objectID(of: $0).key) }
            }
        default:
            throw StrataError(.predicateType, "\(OperandTyping.describe(operand)) is not an object")
        }
    }

    private func object(_ comparison: QueryComparison, entity: String) throws(StrataError) -> Test {
        let lhs = try identity(comparison.lhs, entity: entity)
        switch comparison.op {
        case .equal, .notEqual:
            let rhs = try identity(comparison.rhs, entity: entity)
            let negate = comparison.op == .notEqual
            return relation(lhs, rhs) { a, b in (a == b) != negate }
        case .in:
            guard case .list(let values) = comparison.rhs else { return { _ in false } }
            var members: [ObjectIdentity] = []
            var hasNil = false
            for value in values {
                switch value {
                case .object(let id): members.append(ObjectIdentity(root: root(of: id.entityName), key: id.key))
                default: hasNil = true
                }
            }
            return membership(lhs, members: members, hasNil: hasNil, equal: ==)
        default:
            throw StrataError(.predicateType, "objects can only be compared with ==, != and IN")
        }
    }
}
