import Foundation
import StrataModel

/// Turns IR into a tree of closures over an ``ObjectGraphAccessor``: every
/// model lookup, constant conversion, folding of constants and pattern
/// compilation happens here, once; the closures only read objects and
/// compare.
struct EvaluationCompiler<Accessor: ObjectGraphAccessor> {
    typealias Object = Accessor.Object
    /// A compiled predicate.
    typealias Test = (Object) throws(StrataError) -> Bool
    /// A compiled operand producing a model value (`.null` for nil).
    typealias ValueGetter = (Object) throws(StrataError) -> PropertyValue
    /// A compiled to-one navigation.
    typealias Navigation = (Object) -> Object?
    /// A compiled collection: the destinations of a to-many path.
    typealias Collection = (Object) -> [Object]

    let model: ObjectModel
    let accessor: Accessor
    /// The clock of `now()`.
    let now: @Sendable () -> Date

    // MARK: - Predicates

    func predicate(_ predicate: QueryPredicate, entity: String) throws(StrataError) -> Test {
        switch predicate {
        case .constant(let value):
            return { _ in value }
        case .not(let inner):
            let test = try self.predicate(inner, entity: entity)
            return { object throws(StrataError) in try !test(object) }
        case .and(let parts):
            let tests = try parts.map { part throws(StrataError) in try self.predicate(part, entity: entity) }
            switch tests.count {
            case 0: return { _ in true }
            case 1: return tests[0]
            case 2:
                let (a, b) = (tests[0], tests[1])
                return { object throws(StrataError) in
                    if try !a(object) { return false }
                    return try b(object)
                }
            default:
                return { object throws(StrataError) in
                    for test in tests { if try !test(object) { return false } }
                    return true
                }
            }
        case .or(let parts):
            let tests = try parts.map { part throws(StrataError) in try self.predicate(part, entity: entity) }
            switch tests.count {
            case 0: return { _ in false }
            case 1: return tests[0]
            case 2:
                let (a, b) = (tests[0], tests[1])
                return { object throws(StrataError) in
                    if try a(object) { return true }
                    return try b(object)
                }
            default:
                return { object throws(StrataError) in
                    for test in tests { if try test(object) { return true } }
                    return false
                }
            }
        case .compare(let comparison):
            return try self.comparison(comparison, entity: entity)
        case .quantified(let quantifier, let path, let inner):
            try OperandTyping.checkCollection(path)
            let collection = try self.collection(path, entity: entity)
            let test = try self.predicate(inner, entity: path.toMany.destinationEntity)
            switch quantifier {
            case .any:
                return { object throws(StrataError) in
                    for destination in collection(object) { if try test(destination) { return true } }
                    return false
                }
            case .all:
                return { object throws(StrataError) in
                    for destination in collection(object) { if try !test(destination) { return false } }
                    return true
                }
            case .none:
                return { object throws(StrataError) in
                    for destination in collection(object) { if try test(destination) { return false } }
                    return true
                }
            }
        }
    }

    // MARK: - Navigation

    /// Follows to-one steps; the object itself when there are none.
    func navigation(_ steps: [RelationshipStep]) throws(StrataError) -> Navigation {
        try OperandTyping.checkToOne(steps)
        let accessor = self.accessor
        var keys: [Accessor.RelationshipKey] = []
        for step in steps {
            keys.append(try accessor.relationshipKey(step.relationship, entity: step.sourceEntity))
        }
        switch keys.count {
        case 0:
            return { $0 }
        case 1:
            let key = keys[0]
            return { accessor.destination(key, of: $0) }
        case 2:
            let (first, second) = (keys[0], keys[1])
            return { object in accessor.destination(first, of: object).flatMap { accessor.destination(second, of: $0) } }
        default:
            return { object in
                var current = object
                for key in keys {
                    guard let next = accessor.destination(key, of: current) else { return nil }
                    current = next
                }
                return current
            }
        }
    }

    /// The destinations of a collection path (empty when a to-one hop is nil).
    func collection(_ path: CollectionPath, entity: String) throws(StrataError) -> Collection {
        try OperandTyping.checkCollection(path)
        let key = try accessor.relationshipKey(path.toMany.relationship, entity: path.toMany.sourceEntity)
        let accessor = self.accessor
        if path.toOneSteps.isEmpty {
            return { accessor.destinations(key, of: $0) }
        }
        let navigate = try navigation(path.toOneSteps)
        return { object in navigate(object).map { accessor.destinations(key, of: $0) } ?? [] }
    }

    /// The number of destinations of a collection path.
    func collectionCount(_ path: CollectionPath, entity: String) throws(StrataError) -> (Object) -> Int {
        try OperandTyping.checkCollection(path)
        let key = try accessor.relationshipKey(path.toMany.relationship, entity: path.toMany.sourceEntity)
        let accessor = self.accessor
        if path.toOneSteps.isEmpty {
            return { accessor.destinationCount(key, of: $0) }
        }
        let navigate = try navigation(path.toOneSteps)
        return { object in navigate(object).map { accessor.destinationCount(key, of: $0) } ?? 0 }
    }

    /// The root entity of `entity`'s hierarchy (object identity is a
    /// primary key within one hierarchy).
    func root(of entity: String) -> String {
        model.rootEntityName(of: entity)
    }
}
