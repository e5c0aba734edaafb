import StrataModel

/// Static checks of the IR shared by the evaluator and the SQL compiler, so
/// that both reject the same malformed comparisons with the same errors
/// (``StrataError/Code/predicateType``), before touching any object or row.
enum OperandTyping {
    /// The attribute type of the values an operand produces, or nil when it
    /// is not fixed by the model (constants, lists, functions) or is an object.
    static func valueType(of operand: QueryOperand) throws(StrataError) -> AttributeType? {
        switch operand {
        case .constant, .list, .function, .object:
            return nil
        case .attribute(let steps, let attribute):
            try checkToOne(steps)
            return attribute.type
        case .subqueryCount(let path, _):
            try checkCollection(path)
            return .integer64
        case .aggregate(let function, let path, let attribute):
            try checkCollection(path)
            if function == .count { return .integer64 }
            guard let attribute else {
                throw StrataError(.predicateType, "\(function.rawValue) over '\(path.toMany.relationship.name)' needs an attribute")
            }
            switch function {
            case .count:
                return .integer64
            case .sum:
                guard isSummable(attribute.type) else {
                    throw StrataError(.predicateType, "@sum of '\(attribute.name)' (\(attribute.type.rawValue)) is not a number")
                }
                // Integer sums may exceed the attribute's width.
                if attribute.type.isInteger || attribute.type == .boolean { return .integer64 }
                return attribute.type == .float ? .double : attribute.type
            case .avg:
                guard isSummable(attribute.type) else {
                    throw StrataError(.predicateType, "@avg of '\(attribute.name)' (\(attribute.type.rawValue)) is not a number")
                }
                return attribute.type == .decimal ? .decimal : .double
            case .min, .max:
                guard isOrderable(attribute.type) else {
                    throw StrataError(.predicateType, "\(function.rawValue) of '\(attribute.name)' (\(attribute.type.rawValue)) has no order")
                }
                return attribute.type
            }
        }
    }

    /// Checks operands, operator and domain of a comparison.
    static func check(_ comparison: QueryComparison) throws(StrataError) {
        let op = comparison.op
        let domain = comparison.domain
        if op.isStringOperator || op == .contains, domain != .string, domain != .uri {
            throw StrataError(.predicateType, "\(op.rawValue) compares strings, not \(domain) values")
        }
        if domain == .object, op != .equal, op != .notEqual, op != .in {
            throw StrataError(.predicateType, "objects can only be compared with ==, != and IN, not \(op.rawValue)")
        }
        switch op {
        case .in:
            guard case .list = comparison.rhs else {
                throw StrataError(.predicateType, "IN needs a list of values on its right side")
            }
        case .between:
            guard case .list(let bounds) = comparison.rhs, bounds.count == 2 else {
                throw StrataError(.predicateType, "BETWEEN needs a list of exactly two bounds")
            }
        default:
            if case .list = comparison.rhs {
                throw StrataError(.predicateType, "a list can only be the right side of IN or BETWEEN, not of \(op.rawValue)")
            }
        }
        if case .list = comparison.lhs {
            throw StrataError(.predicateType, "a list cannot be the left side of \(op.rawValue)")
        }
        try checkOperand(comparison.lhs, domain: domain)
        try checkOperand(comparison.rhs, domain: domain)
    }

    private static func checkOperand(_ operand: QueryOperand, domain: ComparisonDomain) throws(StrataError) {
        switch operand {
        case .constant(let value):
            _ = try DomainValue.convert(value, to: domain)
        case .list(let values):
            for value in values { _ = try DomainValue.convert(value, to: domain) }
        case .object(let steps):
            try checkToOne(steps)
            guard domain == .object else {
                throw StrataError(.predicateType, "an object cannot be compared as \(domain)")
            }
        case .function:
            guard domain != .object else {
                throw StrataError(.predicateType, "a function result cannot be compared as an object")
            }
        case .attribute, .aggregate, .subqueryCount:
            guard let type = try valueType(of: operand) else { return }
            guard domain.accepts(type) else {
                throw StrataError(.predicateType, "\(describe(operand)) (\(type.rawValue)) cannot be compared as \(domain)")
            }
        }
    }

    /// Every step must be a to-one relationship.
    static func checkToOne(_ steps: [RelationshipStep]) throws(StrataError) {
        for step in steps where step.relationship.isToMany {
            throw StrataError(.predicateType, "'\(step.sourceEntity).\(step.relationship.name)' is to-many where a to-one is needed")
        }
    }

    /// To-one steps followed by a to-many relationship.
    static func checkCollection(_ path: CollectionPath) throws(StrataError) {
        try checkToOne(path.toOneSteps)
        guard path.toMany.relationship.isToMany else {
            throw StrataError(.predicateType, "'\(path.toMany.sourceEntity).\(path.toMany.relationship.name)' is to-one where a to-many is needed")
        }
    }

    /// Integer, Boolean, floating point or Decimal.
    static func isSummable(_ type: AttributeType) -> Bool {
        type.isNumeric
    }

    /// Types with an order (`@min`, `@max`, sorts).
    static func isOrderable(_ type: AttributeType) -> Bool {
        switch type {
        case .integer16, .integer32, .integer64, .boolean, .double, .float, .decimal,
             .string, .uri, .date, .binary, .transformable, .uuid: true
        case .undefined, .objectID, .composite: false
        }
    }

    /// A short description of an operand for messages.
    static func describe(_ operand: QueryOperand) -> String {
        switch operand {
        case .constant(let value): return "constant \(value)"
        case .list: return "list"
        case .attribute(let steps, let attribute):
            return "'" + (steps.map(\.relationship.name) + [attribute.name]).joined(separator: ".") + "'"
        case .object(let steps):
            return steps.isEmpty ? "SELF" : "'" + steps.map(\.relationship.name).joined(separator: ".") + "'"
        case .aggregate(let function, let path, let attribute):
            let names = path.toOneSteps.map(\.relationship.name) + [path.toMany.relationship.name, function.rawValue] + (attribute.map { [$0.name] } ?? [])
            return "'" + names.joined(separator: ".") + "'"
        case .subqueryCount(let path, _):
            return "SUBQUERY(\(path.toMany.relationship.name)).@count"
        case .function(let function, _):
            return "\(function.rawValue)()"
        }
    }
}
