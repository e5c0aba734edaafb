import Foundation
import StrataModel

/// Checks parsed predicates, expressions and sort descriptors against a
/// model and turns them into the resolved IR (``QueryPredicate``,
/// ``QueryOperand``, ``QuerySortKey``) that evaluators and compilers run.
///
/// Every key path is resolved to model properties, every literal is
/// converted to the type it is compared with, every variable is
/// substituted. Problems are ``StrataError``s with code
/// ``StrataError/Code/predicateType`` (or `.unsupported`,
/// `.unboundVariable`) that name the entity, the key path and the position.
public struct PredicateResolver: Sendable {
    /// The model key paths are resolved in.
    public let model: ObjectModel

    /// Creates a resolver for a model.
    public init(model: ObjectModel) {
        self.model = model
    }

    // MARK: Public entry points

    /// Resolves a predicate on `entityName`, with every variable bound.
    /// `source` is the predicate's text, used to point at errors.
    public func resolve(
        _ predicate: Predicate,
        entity entityName: String,
        variables: [String: VariableValue] = [:],
        source: String? = nil
    ) throws -> QueryPredicate {
        try withPositions(source) {
            try requireEntity(entityName)
            var scope = Scope(entity: entityName, mode: .resolve(variables))
            return try resolvePredicate(predicate, in: &scope)
        }
    }

    /// Parses and resolves a predicate format string.
    public func resolve(
        format: String,
        entity entityName: String,
        variables: [String: VariableValue] = [:]
    ) throws -> QueryPredicate {
        try resolve(try PredicateParser.parse(format), entity: entityName, variables: variables, source: format)
    }

    /// Type-checks a predicate without values for its variables (as at model
    /// load): `$FETCH_SOURCE` is typed as `fetchSourceEntity` when given,
    /// other variables may stand for anything.
    public func check(
        _ predicate: Predicate,
        entity entityName: String,
        fetchSourceEntity: String? = nil,
        source: String? = nil
    ) throws {
        try withPositions(source) {
            try requireEntity(entityName)
            var scope = Scope(entity: entityName, mode: .check(fetchSource: fetchSourceEntity))
            _ = try resolvePredicate(predicate, in: &scope)
        }
    }

    /// Resolves a whole fetch request.
    public func resolve(_ request: FetchRequest, variables: [String: VariableValue] = [:], source: String? = nil) throws -> ResolvedFetch {
        try requireEntity(request.entityName)
        let predicate = try request.predicate.map {
            try resolve($0, entity: request.entityName, variables: variables, source: source)
        } ?? .constant(true)
        guard request.fetchLimit >= 0, request.fetchOffset >= 0 else {
            throw StrataError(.invalidValue, "fetch limit and offset must not be negative (limit \(request.fetchLimit), offset \(request.fetchOffset))")
        }
        var resolved = ResolvedFetch(
            entityName: request.entityName,
            includesSubentities: request.includesSubentities,
            predicate: predicate,
            sortKeys: try resolveSortDescriptors(request.sortDescriptors, entity: request.entityName),
            limit: request.fetchLimit > 0 ? request.fetchLimit : nil,
            offset: request.fetchOffset
        )
        resolved.source = request
        resolved.variables = variables
        return resolved
    }

    /// Resolves sort descriptors to sort keys (attributes reached through to-one relationships).
    public func resolveSortDescriptors(_ descriptors: [SortDescriptor], entity entityName: String) throws -> [QuerySortKey] {
        try descriptors.map { descriptor in
            let components = descriptor.keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            var steps: [RelationshipStep] = []
            var current = entityName
            for (i, component) in components.enumerated() {
                let isLast = i == components.count - 1
                if let attribute = model.attribute(named: component, in: current), isLast {
                    guard attribute.isSortable else {
                        throw StrataError(.predicateType, "cannot sort by '\(descriptor.keyPath)': \(attribute.type.xcodeName) attribute '\(current).\(component)' has no order")
                    }
                    return QuerySortKey(steps: steps, attribute: attribute, ascending: descriptor.ascending, caseInsensitive: descriptor.caseInsensitive)
                }
                if let relationship = model.relationship(named: component, in: current), !isLast {
                    guard !relationship.isToMany else {
                        throw StrataError(.predicateType, "cannot sort by '\(descriptor.keyPath)': '\(current).\(component)' is a to-many relationship")
                    }
                    steps.append(RelationshipStep(sourceEntity: current, relationship: relationship))
                    current = relationship.destinationEntityName
                    continue
                }
                throw StrataError(.predicateType, "cannot sort by '\(descriptor.keyPath)': entity '\(current)' has no attribute '\(component)'")
            }
            throw StrataError(.predicateType, "cannot sort by an empty key path on entity '\(entityName)'")
        }
    }

    // MARK: Scope

    /// Whether variables have values (execution) or are only typed (model load).
    enum Mode {
        case resolve([String: VariableValue])
        case check(fetchSource: String?)
    }

    /// What the current object is and what variables mean while resolving.
    struct Scope {
        /// The entity of the object key paths start from.
        var entity: String
        var mode: Mode
        /// The SUBQUERY variable that names the current object, if inside one.
        var subqueryVariable: String?
        /// Whether bare key paths (SELF) are allowed: false inside a SUBQUERY,
        /// where they would refer to an outer object.
        var outerKeyPathsAllowed = true

        var isChecking: Bool {
            if case .check = mode { return true }
            return false
        }
    }

    func requireEntity(_ name: String) throws {
        guard model.entity(named: name) != nil else {
            throw StrataError(.predicateType, "unknown entity '\(name)'")
        }
    }

    // MARK: Predicates

    func resolvePredicate(_ predicate: Predicate, in scope: inout Scope) throws -> QueryPredicate {
        switch predicate {
        case .truePredicate:
            return .constant(true)
        case .falsePredicate:
            return .constant(false)
        case .not(let inner):
            return .not(try resolvePredicate(inner, in: &scope))
        case .and(let parts):
            return .and(try parts.map { try resolvePredicate($0, in: &scope) })
        case .or(let parts):
            return .or(try parts.map { try resolvePredicate($0, in: &scope) })
        case .comparison(let comparison):
            return try resolveComparison(comparison, in: &scope)
        }
    }
}

/// An error with a position in the predicate text, turned into a
/// ``StrataError`` with line, column and caret by ``PredicateResolver``.
struct PositionedError: Error {
    var code: StrataError.Code
    var message: String
    var range: SourceRange
}

extension PredicateResolver {
    /// Runs `body`, turning positioned errors into StrataErrors that point
    /// into `source` (or give the character offset when there is no source).
    func withPositions<T>(_ source: String?, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PositionedError {
            guard let source else {
                throw StrataError(error.code, "\(error.message) (at character \(error.range.start + 1))")
            }
            let (line, column, lineText) = Self.locate(error.range.start, in: source)
            let width = max(1, min(error.range.end - error.range.start, lineText.count - column + 1))
            let caret = String(repeating: " ", count: max(0, column - 1)) + String(repeating: "^", count: width)
            throw StrataError(error.code, "line \(line), column \(column): \(error.message)\n\(lineText)\n\(caret)")
        }
    }

    /// Line, column (1-based) and the line's text of a character offset.
    static func locate(_ offset: Int, in text: String) -> (Int, Int, String) {
        var line = 1
        var column = 1
        var lineStart = text.startIndex
        var index = text.startIndex
        var count = 0
        while index < text.endIndex, count < offset {
            if text[index] == "\n" {
                line += 1
                column = 1
                lineStart = text.index(after: index)
            } else {
                column += 1
            }
            index = text.index(after: index)
            count += 1
        }
        let lineEnd = text[lineStart...].firstIndex(of: "\n") ?? text.endIndex
        return (line, column, String(text[lineStart..<lineEnd]))
    }
}

extension AttributeDescription {
    /// Whether values of the attribute have an order usable for sorting.
    var isSortable: Bool {
        switch type {
        case .transformable, .undefined, .objectID, .composite: false
        default: true
        }
    }
}
