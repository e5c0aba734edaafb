import StrataModel

extension PredicateResolver {
    /// Parses and resolves the derivation expression of a derived attribute
    /// of `entityName`, checking that its result fits the attribute's type.
    ///
    /// Supported: key paths through to-one relationships (`name`,
    /// `author.name`), `toMany.@count`, `toMany.@sum.x` (and `@avg`,
    /// `@min`, `@max`), `canonical:(keyPath)`, `uppercase:(keyPath)`,
    /// `lowercase:(keyPath)` and `now()`.
    public func resolveDerivation(of attribute: AttributeDescription, in entityName: String) throws -> QueryOperand {
        guard let text = attribute.derivationExpression, !text.isEmpty else {
            throw StrataError(.predicateType, "derived attribute '\(entityName).\(attribute.name)' has no derivation expression")
        }
        try requireEntity(entityName)
        let expression = try PredicateParser.parseExpression(text)
        return try withPositions(text) {
            let (operand, kind) = try derivation(expression, entity: entityName)
            guard Self.derivedKind(kind, fits: attribute.type) else {
                throw PositionedError(code: .predicateType, message: "derivation gives a \(kind.name) value, which does not fit \(attribute.type.xcodeName) attribute '\(entityName).\(attribute.name)'", range: expression.range)
            }
            return operand
        }
    }

    private func derivation(_ expression: Expression, entity: String) throws -> (QueryOperand, Kind) {
        switch expression {
        case .keyPath(.evaluatedObject, let components, let range):
            switch try resolveKeyPath(components, from: entity, range: range) {
            case .operand(.object, _):
                throw PositionedError(code: .predicateType, message: "a derivation must produce a value, not an object ('\(components.joined(separator: "."))' is a relationship)", range: range)
            case .operand(let operand, let kind):
                return (operand, kind)
            default:
                throw PositionedError(code: .predicateType, message: "'\(components.joined(separator: "."))' crosses a to-many relationship; use @count, @sum, @avg, @min or @max", range: range)
            }
        case .function(let name, let arguments, let range):
            switch (name.lowercased(), arguments.count) {
            case ("now", 0):
                return (.function(.now, []), .date)
            case ("canonical", 1), ("uppercase", 1), ("lowercase", 1):
                let (argument, kind) = try derivation(arguments[0], entity: entity)
                guard kind == .string else {
                    throw PositionedError(code: .predicateType, message: "\(name): needs a string, found a \(kind.name) value", range: arguments[0].range)
                }
                let function: QueryFunction = name.lowercased() == "canonical" ? .canonical : (name.lowercased() == "uppercase" ? .uppercase : .lowercase)
                return (.function(function, [argument]), .string)
            default:
                throw PositionedError(code: .unsupported, message: "derivation function '\(name)' with \(arguments.count) argument(s) is not supported (supported: canonical:(x), uppercase:(x), lowercase:(x), now())", range: range)
            }
        case .literal(let literal, let range):
            switch literal {
            case .string(let s): return (.constant(.string(s)), .string)
            case .boolean(let b): return (.constant(.boolean(b)), .boolean)
            case .null: return (.constant(.null), .null)
            case .number(let text):
                if let i = Int64(text) { return (.constant(.integer(i)), .integer) }
                if let d = Double(text) { return (.constant(.double(d)), .double) }
                throw PositionedError(code: .predicateType, message: "not a number: \(text)", range: range)
            }
        default:
            throw PositionedError(code: .unsupported, message: "this form of derivation expression is not supported", range: expression.range)
        }
    }

    static func derivedKind(_ kind: Kind, fits type: AttributeType) -> Bool {
        let target = Kind(type)
        if kind == .null || kind == target { return true }
        if kind.isNumeric && target.isNumeric { return true }
        // now() into a Double: seconds since the reference date, as Xcode allows.
        if kind == .date && target == .double { return true }
        return false
    }
}
