import Foundation
import StrataModel

/// A ``QueryOperand`` compiled once and evaluated to a ``PropertyValue`` per
/// object: what derived attributes are computed with when a context saves
/// (`canonical:(title)`, `uppercase:(…)`, `lowercase:(…)`, `now()`, key
/// paths such as `author.name`, `books.@count`, `items.@sum.price`).
///
/// Values are the model's: `@count` and subquery counts are `.integer`,
/// `@sum` is `.integer`, `.double` or `.decimal` after the attribute (0 when
/// empty), `@avg` is `.double` (`.decimal` for Decimal attributes) and nil
/// when empty, `@min`/`@max` keep the attribute's type, a to-one path to an
/// object is `.object(ID)`. String functions of nil are nil.
public struct OperandEvaluator<Accessor: ObjectGraphAccessor> {
    /// The accessor objects are read through.
    public let accessor: Accessor
    private let get: (Accessor.Object) throws(StrataError) -> PropertyValue

    /// Compiles `operand` for objects of `entity`; `now` is the clock of `now()`.
    public init(
        _ operand: QueryOperand,
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
        self.get = try compiler.value(operand, entity: entity)
    }

    /// The operand's value for `object`.
    public func value(of object: Accessor.Object) throws(StrataError) -> PropertyValue {
        try get(object)
    }
}
