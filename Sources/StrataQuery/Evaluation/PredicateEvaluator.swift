import Foundation
import StrataModel

/// A ``QueryPredicate`` compiled once into closures and evaluated against
/// objects read through an ``ObjectGraphAccessor``, with exactly the
/// semantics documented on ``QueryPredicate`` (the same as
/// ``SQLQueryCompiler``'s SQL).
///
/// Compiling checks the predicate (operand types against comparison
/// domains, operators, paths), converts and folds constants, and compiles
/// `LIKE` patterns and constant `MATCHES` expressions; an invalid regular
/// expression fails here with ``StrataError/Code/predicateType``.
public struct PredicateEvaluator<Accessor: ObjectGraphAccessor> {
    /// The accessor objects are read through.
    public let accessor: Accessor
    /// The entity the predicate was compiled for.
    public let entityName: String
    private let test: (Accessor.Object) throws(StrataError) -> Bool

    /// Compiles `predicate` for objects of `entity` (and its subentities).
    public init(
        _ predicate: QueryPredicate,
        entity: String,
        model: ObjectModel,
        accessor: Accessor,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(StrataError) {
        guard model.entity(named: entity) != nil else {
            throw StrataError(.predicateType, "unknown entity '\(entity)'")
        }
        let compiler = EvaluationCompiler(model: model, accessor: accessor, now: now)
        self.accessor = accessor
        self.entityName = entity
        self.test = try compiler.predicate(predicate, entity: entity)
    }

    /// Whether `object` satisfies the predicate. Throws only for problems
    /// that depend on the data: a `MATCHES` pattern read from an object
    /// that is not a valid expression, an integer `@sum` that overflows.
    public func evaluate(_ object: Accessor.Object) throws(StrataError) -> Bool {
        try test(object)
    }

    /// The objects of `objects` that satisfy the predicate, in order.
    public func filter<S: Sequence>(_ objects: S) throws(StrataError) -> [Accessor.Object] where S.Element == Accessor.Object {
        var result: [Accessor.Object] = []
        for object in objects { if try test(object) { result.append(object) } }
        return result
    }
}
