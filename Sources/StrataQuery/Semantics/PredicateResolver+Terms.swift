import Foundation
import StrataModel

extension PredicateResolver {
    /// The kind of value an operand produces, for type checking.
    enum Kind: Equatable {
        case integer, double, decimal, string, boolean, date, binary, uuid, uri
        /// An object of this entity (or a subentity).
        case object(String)
        /// A value with no order or equality we can check (Transformable
        /// through a custom class, Undefined, Composite): only `== nil`.
        case opaque
        /// `nil`.
        case null

        init(_ type: AttributeType) {
            switch type {
            case .integer16, .integer32, .integer64: self = .integer
            case .decimal: self = .decimal
            case .double, .float: self = .double
            case .string: self = .string
            case .boolean: self = .boolean
            case .date: self = .date
            case .binary, .transformable: self = .binary
            case .uuid: self = .uuid
            case .uri: self = .uri
            case .undefined, .objectID, .composite: self = .opaque
            }
        }

        init(_ value: PropertyValue) {
            switch value {
            case .null: self = .null
            case .integer: self = .integer
            case .double: self = .double
            case .decimal: self = .decimal
            case .string: self = .string
            case .boolean: self = .boolean
            case .date: self = .date
            case .binary: self = .binary
            case .uuid: self = .uuid
            case .uri: self = .uri
            case .object(let id): self = .object(id.entityName)
            case .objects: self = .opaque
            }
        }

        var isNumeric: Bool {
            switch self {
            case .integer, .double, .decimal, .boolean: true
            default: false
            }
        }

        /// How the kind is named in messages.
        var name: String {
            switch self {
            case .integer: "integer"
            case .double: "floating-point"
            case .decimal: "decimal"
            case .string: "string"
            case .boolean: "boolean"
            case .date: "date"
            case .binary: "binary"
            case .uuid: "UUID"
            case .uri: "URI"
            case .object(let entity): "'\(entity)' object"
            case .opaque: "untyped"
            case .null: "nil"
            }
        }
    }

    /// A constant before it is converted to a comparison's domain.
    enum Constant: Equatable {
        /// A number literal as written.
        case number(String)
        /// A value (literal or bound variable).
        case value(PropertyValue)

        var kind: Kind {
            switch self {
            case .number(let text): Int64(text) != nil ? .integer : .double
            case .value(let value): Kind(value)
            }
        }
    }

    /// What one side of a comparison resolved to.
    enum Term {
        /// A value read from the object graph.
        case operand(QueryOperand, Kind)
        /// A constant.
        case constant(Constant)
        /// A list of constants.
        case list([Constant])
        /// A key path that crosses a to-many relationship: the rest is
        /// relative to each destination (an entity of `destination`).
        case collection(CollectionPath, rest: [String], destination: String)
        /// A value whose type is known but whose value is not (model-load checks).
        case typed(Kind)
        /// A variable with no type or value (model-load checks).
        case unknown
    }

    // MARK: Expressions

    func term(_ expression: Expression, in scope: inout Scope) throws -> Term {
        switch expression {
        case .literal(let literal, _):
            switch literal {
            case .null: return .constant(.value(.null))
            case .boolean(let value): return .constant(.value(.boolean(value)))
            case .number(let text): return .constant(.number(text))
            case .string(let text): return .constant(.value(.string(text)))
            }
        case .array(let elements, _):
            var constants: [Constant] = []
            for element in elements {
                switch try term(element, in: &scope) {
                case .constant(let constant): constants.append(constant)
                case .typed, .unknown: return .unknown
                default:
                    throw PositionedError(code: .unsupported, message: "only constants are supported inside an array literal", range: element.range)
                }
            }
            return .list(constants)
        case .cast(let inner, let type, let range):
            return try cast(inner, to: type, range: range, in: &scope)
        case .function(let name, _, let range):
            throw PositionedError(code: .unsupported, message: "function '\(name)' is only supported in derivation expressions, not in predicates", range: range)
        case .keyPath(let base, let components, let range):
            return try keyPathTerm(base: base, components: components, range: range, in: &scope)
        }
    }

    private func cast(_ inner: Expression, to type: String, range: SourceRange, in scope: inout Scope) throws -> Term {
        let value = try term(inner, in: &scope)
        guard case .constant(let constant) = value else {
            if case .unknown = value { return type == "NSDate" ? .typed(.date) : .unknown }
            throw PositionedError(code: .unsupported, message: "CAST of a key path is not supported; cast a constant", range: range)
        }
        switch (type, constant) {
        case ("NSDate", .number(let text)):
            guard let seconds = Double(text) else {
                throw PositionedError(code: .predicateType, message: "CAST(\(text), \"NSDate\") needs a number of seconds since 2001-01-01", range: range)
            }
            return .constant(.value(.date(Date(timeIntervalSinceReferenceDate: seconds))))
        case ("NSDate", .value(.date)):
            return value
        case ("NSNumber", .value(.string(let text))):
            guard Double(text) != nil else {
                throw PositionedError(code: .predicateType, message: "CAST(\"\(text)\", \"NSNumber\"): not a number", range: range)
            }
            return .constant(.number(text))
        case ("NSNumber", .number):
            return value
        case ("NSString", .number(let text)):
            return .constant(.value(.string(text)))
        case ("NSString", .value(.string)):
            return value
        default:
            throw PositionedError(code: .unsupported, message: "CAST to \"\(type)\" of this value is not supported (supported: NSDate from seconds, NSNumber from a string, NSString from a number)", range: range)
        }
    }

    // MARK: Key paths

    private func keyPathTerm(base: KeyPathBase, components: [String], range: SourceRange, in scope: inout Scope) throws -> Term {
        switch base {
        case .evaluatedObject:
            guard scope.outerKeyPathsAllowed else {
                throw PositionedError(code: .unsupported, message: "inside SUBQUERY, key paths must start with the subquery variable ($\(scope.subqueryVariable ?? "x"))", range: range)
            }
            return try resolveKeyPath(components, from: scope.entity, range: range)

        case .variable(let name):
            if name == scope.subqueryVariable {
                return try resolveKeyPath(components, from: scope.entity, range: range)
            }
            return try variableTerm(name, components: components, range: range, scope: scope)

        case .subquery(let subquery):
            guard components == ["@count"] else {
                throw PositionedError(code: .unsupported, message: "SUBQUERY is supported only as SUBQUERY(…).@count", range: range)
            }
            let collection = try term(subquery.collection, in: &scope)
            switch collection {
            case .collection(let path, let rest, let destination) where rest.isEmpty:
                var inner = Scope(entity: destination, mode: scope.mode, subqueryVariable: subquery.variable, outerKeyPathsAllowed: false)
                let predicate = try resolvePredicate(subquery.predicate, in: &inner)
                return .operand(.subqueryCount(path, predicate), .integer)
            case .typed, .unknown:
                return .typed(.integer)
            default:
                throw PositionedError(code: .predicateType, message: "SUBQUERY needs a to-many relationship as its collection", range: subquery.collection.range)
            }
        }
    }

    private func variableTerm(_ name: String, components: [String], range: SourceRange, scope: Scope) throws -> Term {
        switch scope.mode {
        case .check(let fetchSource):
            if name == "FETCH_SOURCE", let fetchSource {
                if components.isEmpty { return .typed(.object(fetchSource)) }
                switch try resolveKeyPath(components, from: fetchSource, range: range) {
                case .operand(_, let kind): return .typed(kind)
                default: return .unknown
                }
            }
            if name == "FETCHED_PROPERTY" {
                throw PositionedError(code: .unsupported, message: "$FETCHED_PROPERTY is not supported", range: range)
            }
            return .unknown

        case .resolve(let variables):
            guard let binding = variables[name] else {
                throw PositionedError(code: .unboundVariable, message: "variable $\(name) has no value", range: range)
            }
            switch binding {
            case .value(let value):
                guard components.isEmpty else {
                    throw PositionedError(code: .predicateType, message: "variable $\(name) is a value, not an object: cannot read '\(components.joined(separator: "."))' from it", range: range)
                }
                if case .objects(let ids) = value { return .list(ids.map { .value(.object($0)) }) }
                return .constant(.value(value))
            case .list(let values):
                guard components.isEmpty else {
                    throw PositionedError(code: .predicateType, message: "variable $\(name) is a list, not an object", range: range)
                }
                return .list(values.map { .value($0) })
            case .object(let id, let values):
                if components.isEmpty { return .constant(.value(.object(id))) }
                let key = components.joined(separator: ".")
                guard let value = values[key] else {
                    throw PositionedError(code: .unboundVariable, message: "$\(name).\(key) has no value (the object's '\(key)' was not provided)", range: range)
                }
                return .constant(.value(value))
            }
        }
    }

    /// Resolves `components` starting at `entity`.
    func resolveKeyPath(_ components: [String], from entity: String, range: SourceRange) throws -> Term {
        var steps: [RelationshipStep] = []
        var current = entity
        if components.isEmpty { return .operand(.object([]), .object(entity)) }
        for (i, component) in components.enumerated() {
            let isLast = i == components.count - 1
            let walked = components[...i].joined(separator: ".")
            if component.hasPrefix("@") {
                throw PositionedError(code: .predicateType, message: "'\(component)' in '\(components.joined(separator: "."))' must follow a to-many relationship", range: range)
            }
            if let attribute = model.attribute(named: component, in: current) {
                guard attribute.isPersisted else {
                    throw PositionedError(code: .predicateType, message: "'\(current).\(component)' is transient: it is not stored and cannot be used in a fetch predicate", range: range)
                }
                guard isLast else {
                    throw PositionedError(code: .predicateType, message: "'\(walked)' is an attribute of '\(current)'; the key path cannot continue with '\(components[i + 1])'", range: range)
                }
                return .operand(.attribute(steps, attribute), Kind(attribute.type))
            }
            if let relationship = model.relationship(named: component, in: current) {
                guard !relationship.isTransient else {
                    throw PositionedError(code: .predicateType, message: "'\(current).\(component)' is a transient relationship and cannot be used in a fetch predicate", range: range)
                }
                guard model.entity(named: relationship.destinationEntityName) != nil else {
                    throw PositionedError(code: .predicateType, message: "'\(current).\(component)' points to unknown entity '\(relationship.destinationEntityName)'", range: range)
                }
                let step = RelationshipStep(sourceEntity: current, relationship: relationship)
                if !relationship.isToMany {
                    steps.append(step)
                    current = relationship.destinationEntityName
                    if isLast { return .operand(.object(steps), .object(current)) }
                    continue
                }
                let path = CollectionPath(toOneSteps: steps, toMany: step)
                let destination = relationship.destinationEntityName
                let rest = Array(components[(i + 1)...])
                if let first = rest.first, first.hasPrefix("@") {
                    return try aggregateTerm(first, path: path, rest: Array(rest.dropFirst()), destination: destination, range: range)
                }
                return .collection(path, rest: rest, destination: destination)
            }
            if model.fetchedProperty(named: component, in: current) != nil {
                throw PositionedError(code: .predicateType, message: "'\(current).\(component)' is a fetched property; fetched properties cannot be used in a fetch predicate", range: range)
            }
            throw PositionedError(code: .predicateType, message: "entity '\(current)' has no property '\(component)'\(suggestion(for: component, in: current))", range: range)
        }
        throw PositionedError(code: .predicateType, message: "empty key path", range: range)
    }

    private func aggregateTerm(_ name: String, path: CollectionPath, rest: [String], destination: String, range: SourceRange) throws -> Term {
        guard let function = AggregateFunction(rawValue: name) else {
            throw PositionedError(code: .unsupported, message: "collection operator '\(name)' is not supported (supported: @count, @sum, @avg, @min, @max)", range: range)
        }
        if function == .count {
            guard rest.isEmpty else {
                throw PositionedError(code: .predicateType, message: "@count must end the key path", range: range)
            }
            return .operand(.aggregate(.count, path, nil), .integer)
        }
        guard rest.count == 1, let attribute = model.attribute(named: rest[0], in: destination) else {
            let what = rest.isEmpty ? "nothing" : "'\(rest.joined(separator: "."))'"
            throw PositionedError(code: .predicateType, message: "\(name) needs an attribute of '\(destination)' after it, found \(what)", range: range)
        }
        guard attribute.isPersisted else {
            throw PositionedError(code: .predicateType, message: "'\(destination).\(attribute.name)' is transient and cannot be aggregated in a fetch predicate", range: range)
        }
        let kind = Kind(attribute.type)
        switch function {
        case .sum, .avg:
            guard kind.isNumeric else {
                throw PositionedError(code: .predicateType, message: "\(name) needs a numeric attribute; '\(destination).\(attribute.name)' is \(attribute.type.xcodeName)", range: range)
            }
            let result: Kind
            switch (function, kind) {
            case (_, .decimal): result = .decimal
            case (.avg, _), (_, .double): result = .double
            default: result = .integer
            }
            return .operand(.aggregate(function, path, attribute), result)
        default:
            guard attribute.isSortable, kind != .opaque else {
                throw PositionedError(code: .predicateType, message: "\(name) needs an ordered attribute; '\(destination).\(attribute.name)' is \(attribute.type.xcodeName)", range: range)
            }
            return .operand(.aggregate(function, path, attribute), kind == .boolean ? .integer : kind)
        }
    }

    private func suggestion(for name: String, in entity: String) -> String {
        let names = model.attributes(of: entity).map(\.name) + model.relationships(of: entity).map(\.name)
        if let match = names.first(where: { $0.lowercased() == name.lowercased() }) {
            return " (did you mean '\(match)'?)"
        }
        return ""
    }
}
