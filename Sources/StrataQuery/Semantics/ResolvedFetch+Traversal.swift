extension ResolvedFetch {
    /// The entities whose objects the predicate or the sort keys read
    /// through relationships: the destinations of every step, to-one or
    /// to-many, in operands, quantifiers, aggregates and subqueries. A
    /// comparison of a to-one relationship itself (`author == $ID`) reads
    /// the object's own reference, not its destination.
    public var traversedEntities: Set<String> {
        var entities: Set<String> = []
        Self.collect(predicate, into: &entities)
        for key in sortKeys {
            for step in key.steps { entities.insert(step.destinationEntity) }
        }
        return entities
    }

    private static func collect(_ predicate: QueryPredicate, into entities: inout Set<String>) {
        switch predicate {
        case .constant:
            break
        case .not(let inner):
            collect(inner, into: &entities)
        case .and(let terms), .or(let terms):
            for term in terms { collect(term, into: &entities) }
        case .compare(let comparison):
            collect(comparison.lhs, into: &entities)
            collect(comparison.rhs, into: &entities)
        case .quantified(_, let path, let inner):
            collect(path, into: &entities)
            collect(inner, into: &entities)
        }
    }

    private static func collect(_ operand: QueryOperand, into entities: inout Set<String>) {
        switch operand {
        case .constant, .list:
            break
        case .attribute(let steps, _):
            for step in steps { entities.insert(step.destinationEntity) }
        case .object(let steps):
            // The last step is the reference itself; earlier ones are read.
            for step in steps.dropLast() { entities.insert(step.destinationEntity) }
        case .aggregate(_, let path, _):
            collect(path, into: &entities)
        case .subqueryCount(let path, let inner):
            collect(path, into: &entities)
            collect(inner, into: &entities)
        case .function(_, let arguments):
            for argument in arguments { collect(argument, into: &entities) }
        }
    }

    private static func collect(_ path: CollectionPath, into entities: inout Set<String>) {
        for step in path.toOneSteps { entities.insert(step.destinationEntity) }
        entities.insert(path.toMany.destinationEntity)
    }
}
