import StrataModel

extension QueryPredicate {
    /// The predicate judged from an object `chain` (to-one steps) before
    /// the one it is about: `name == 'x'` on Writer, rebased onto
    /// `[Work.writer]`, is `writer.name == 'x'` on Work. Used to ask, of
    /// the object a key path reaches, what an entity's rule asks of it.
    public func rebased(onto chain: [RelationshipStep]) -> QueryPredicate {
        guard !chain.isEmpty else { return self }
        switch self {
        case .constant:
            return self
        case .not(let inner):
            return .not(inner.rebased(onto: chain))
        case .and(let terms):
            return .and(terms.map { $0.rebased(onto: chain) })
        case .or(let terms):
            return .or(terms.map { $0.rebased(onto: chain) })
        case .compare(var comparison):
            comparison.lhs = comparison.lhs.rebased(onto: chain)
            comparison.rhs = comparison.rhs.rebased(onto: chain)
            return .compare(comparison)
        case .quantified(let quantifier, let path, let inner):
            // The inner predicate is about each destination: unchanged.
            return .quantified(quantifier, path.rebased(onto: chain), inner)
        }
    }
}

extension QueryOperand {
    /// The operand read from an object `chain` before the one it is about.
    public func rebased(onto chain: [RelationshipStep]) -> QueryOperand {
        switch self {
        case .constant, .list:
            return self
        case .attribute(let steps, let attribute):
            return .attribute(chain + steps, attribute)
        case .object(let steps):
            return .object(chain + steps)
        case .aggregate(let function, let path, let attribute):
            return .aggregate(function, path.rebased(onto: chain), attribute)
        case .subqueryCount(let path, let inner):
            return .subqueryCount(path.rebased(onto: chain), inner)
        case .function(let function, let arguments):
            return .function(function, arguments.map { $0.rebased(onto: chain) })
        }
    }
}

extension CollectionPath {
    /// The path taken from an object `chain` before its start.
    public func rebased(onto chain: [RelationshipStep]) -> CollectionPath {
        CollectionPath(toOneSteps: chain + toOneSteps, toMany: toMany)
    }
}

extension QueryPredicate {
    /// `SELF IN ids`: the objects among `ids`.
    public static func objects(in ids: [ObjectID]) -> QueryPredicate {
        .compare(QueryComparison(lhs: .object([]), op: .in, rhs: .list(ids.map { .object($0) }), domain: .object))
    }
}
