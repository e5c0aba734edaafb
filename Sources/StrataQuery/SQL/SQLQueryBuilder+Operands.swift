import Foundation
import StrataModel

extension SQLQueryBuilder {
    /// An operand as an SQL expression in `domain` (strings folded with
    /// `options`), or nil when it is always nil.
    func operand(_ operand: QueryOperand, _ domain: ComparisonDomain, _ options: StringComparisonOptions, _ scope: SQLScope) throws(StrataError) -> SQLFragment? {
        switch operand {
        case .constant(let value):
            return try constant(value, domain, options)
        case .list:
            throw StrataError(.predicateType, "a list is not a single value")
        case .attribute(let steps, let attribute):
            guard let column = try attributeColumn(steps, attribute, scope) else { return nil }
            return try convert(SQLFragment(column), from: attribute.type, to: domain, options)
        case .aggregate(let function, let path, let attribute):
            guard let type = try OperandTyping.valueType(of: operand) else { return nil }
            // The extreme string folded, not the extreme folded string.
            let folding = (function == .min || function == .max) && (domain == .string || domain == .uri) ? options : []
            guard let expression = try aggregate(function, path, attribute, scope, folding: folding) else { return nil }
            return try convert(expression, from: type, to: domain, folding.isEmpty ? options : [])
        case .subqueryCount(let path, let inner):
            guard let source = try collection(path, scope) else {
                return try convert(SQLFragment("0"), from: .integer64, to: domain, options)
            }
            let condition = try predicate(inner, source.scope)
            let count = "(SELECT COUNT(*) FROM " + source.scope.fromClause() + " WHERE \(source.link) AND " + condition + ")"
            return try convert(count, from: .integer64, to: domain, options)
        case .object:
            throw StrataError(.predicateType, "an object cannot be compared as \(domain)")
        case .function(let function, _):
            throw StrataError(.unsupported, "the derivation function \(function.rawValue)() cannot be compiled to SQL")
        }
    }

    /// A constant converted to `domain` and bound, or nil for nil.
    func constant(_ value: PropertyValue, _ domain: ComparisonDomain, _ options: StringComparisonOptions) throws(StrataError) -> SQLFragment? {
        try Self.boundConstant(value, domain, options).map(SQLFragment.bind)
    }

    /// The argument a constant is bound to in `domain`, or nil for nil.
    static func boundConstant(_ value: PropertyValue, _ domain: ComparisonDomain, _ options: StringComparisonOptions) throws(StrataError) -> SQLValue? {
        var converted = try DomainValue.convert(value, to: domain)
        if case .null = converted { return nil }
        if case .string(let text) = converted, !options.isEmpty {
            converted = .string(StringFolding.fold(text, options))
        }
        let bound = SQLValueCoding.sqlValue(for: converted)
        return bound == .null ? nil : bound
    }

    /// ``operand(_:_:_:_:)`` for a side of a comparison: a constant bound
    /// from `variable` is marked as that use's parameter.
    func side(_ operand: QueryOperand, variable: VariableUse?, _ domain: ComparisonDomain, _ options: StringComparisonOptions, _ scope: SQLScope) throws(StrataError) -> SQLFragment? {
        guard var fragment = try self.operand(operand, domain, options, scope) else { return nil }
        if let variable, case .constant = operand, fragment.arguments.count == 1 {
            fragment.parameters = [QueryParameter(index: 0, use: variable, domain: domain, options: options)]
        }
        return fragment
    }

    /// A stored value of `type` as the comparison domain sees it: 64-bit
    /// integers as REAL in the Double domain (as `Double(x)` does), numbers
    /// as decimal keys in the Decimal domain, folded strings.
    func convert(_ expression: SQLFragment, from type: AttributeType, to domain: ComparisonDomain, _ options: StringComparisonOptions) throws(StrataError) -> SQLFragment {
        switch domain {
        case .double:
            return type == .integer64 ? dialect.integerAsDouble(expression) : expression
        case .decimal:
            return type == .decimal ? expression : try dialect.asDecimal(expression, from: type)
        case .string, .uri:
            return options.isEmpty ? expression : try dialect.fold(expression, options)
        default:
            return expression
        }
    }

    /// `@count`, `@sum`, `@avg`, `@min`, `@max` as a scalar subquery, or a
    /// constant when the collection is always empty (nil for NULL);
    /// `@min` and `@max` of strings folded with `folding` when not empty.
    private func aggregate(_ function: AggregateFunction, _ path: CollectionPath, _ attribute: AttributeDescription?, _ scope: SQLScope,
                           folding: StringComparisonOptions = []) throws(StrataError) -> SQLFragment? {
        let source = try collection(path, scope)
        if function == .count {
            guard let source else { return SQLFragment("0") }
            return SQLFragment("(SELECT COUNT(*) FROM \(source.countFrom) WHERE \(source.countLink))")
        }
        guard let attribute else {
            throw StrataError(.predicateType, "\(function.rawValue) needs an attribute")
        }
        let type = attribute.type
        let integerLike = type.isInteger || type == .boolean
        guard let source else {
            switch function {
            case .sum:
                if type == .decimal { return .bind(.decimal(0)) }
                return SQLFragment(integerLike ? "0" : "0.0")
            default:
                return nil
            }
        }
        if attribute.isTransient {
            throw StrataError(.unsupported, "transient attribute '\(attribute.name)' is not stored; SQL cannot aggregate it")
        }
        guard let columnName = schema.column(forAttribute: attribute.name, in: path.toMany.destinationEntity) else {
            throw StrataError(.predicateType, "'\(path.toMany.destinationEntity)' has no stored attribute '\(attribute.name)'")
        }
        let column = "\(source.scope.alias).\(SQLSchema.quote(columnName))"
        if !folding.isEmpty, function == .min || function == .max {
            return try dialect.foldedExtremum(function == .min ? "MIN" : "MAX", column, folding, from: "FROM " + source.scope.fromClause() + " WHERE \(source.link)")
        }
        let expression: String
        switch function {
        case .count:
            expression = "COUNT(*)"
        case .sum:
            if integerLike {
                expression = dialect.integerSum(column)
            } else if type == .decimal {
                expression = try dialect.decimalSum(column)
            } else {
                expression = try dialect.doubleSum(column)
            }
        case .avg:
            if integerLike {
                // The exact integer sum as a Double, divided.
                expression = dialect.integerAsDouble(SQLFragment("SUM(\(column))")).sql + " / NULLIF(COUNT(\(column)), 0)"
            } else if type == .decimal {
                expression = try dialect.decimalAverage(column)
            } else {
                expression = try dialect.doubleAverage(column)
            }
        case .min:
            expression = dialect.extremum("MIN", column, type: type)
        case .max:
            expression = dialect.extremum("MAX", column, type: type)
        }
        return "(SELECT " + SQLFragment(expression) + " FROM " + source.scope.fromClause() + " WHERE \(source.link))"
    }
}
