import StrataModel
import StrataQuery

extension ResolvedFetch {
    /// The fetch as a caller bound by `restriction` may run it: its own
    /// entity's objects limited to the readable ones, and every related
    /// object its predicate reads limited the same way: a comparison
    /// through a to-one holds only when every object on the way may be
    /// read; `ANY`, `ALL`, `SUBQUERY` and `@count` consider only readable
    /// destinations. Refused (140201): `@sum`, `@avg`, `@min` and `@max`
    /// over destinations not all readable, and sort keys through a to-one
    /// to such objects (neither can leave out what may not be read).
    public func restricted(by restriction: @escaping ReadRestriction) throws -> ResolvedFetch {
        for key in sortKeys {
            for step in key.steps where try restriction(step.destinationEntity) != .constant(true) {
                throw StrataError(.accessDenied, "a fetch of \(entityName) sorted by a key through '\(step.relationship.name)' is not allowed: rule \(step.destinationEntity).read limits which \(step.destinationEntity) objects may be read")
            }
        }
        var fetch = self
        let rewriter = ReadRestrictionRewriter(restriction: restriction)
        let limited = try rewriter.rewrite(predicate)
        let own = try restriction(entityName)
        fetch.predicate = QueryPredicate.conjunction([limited, own])
        return fetch
    }
}

extension QueryPredicate {
    /// `terms` AND-ed, `TRUE` terms left out.
    static func conjunction(_ terms: [QueryPredicate]) -> QueryPredicate {
        var kept: [QueryPredicate] = []
        for term in terms {
            switch term {
            case .constant(true): continue
            case .constant(false): return .constant(false)
            default: kept.append(term)
            }
        }
        switch kept.count {
        case 0: return .constant(true)
        case 1: return kept[0]
        default: return .and(kept)
        }
    }
}

/// Rewrites a resolved predicate so that every related object it reads is
/// one the caller may read (see ``ResolvedFetch/restricted(by:)``).
struct ReadRestrictionRewriter {
    let restriction: ReadRestriction

    func rewrite(_ predicate: QueryPredicate) throws -> QueryPredicate {
        switch predicate {
        case .constant:
            return predicate
        case .not(let inner):
            return .not(try rewrite(inner))
        case .and(let terms):
            return .and(try terms.map { try rewrite($0) })
        case .or(let terms):
            return .or(try terms.map { try rewrite($0) })
        case .compare(var comparison):
            var chains: [[RelationshipStep]] = []
            var references: [[RelationshipStep]] = []
            comparison.lhs = try rewrite(comparison.lhs, chains: &chains, references: &references)
            comparison.rhs = try rewrite(comparison.rhs, chains: &chains, references: &references)
            return QueryPredicate.conjunction(try readable(chains) + (try visible(references)) + [.compare(comparison)])
        case .quantified(let quantifier, let path, let inner):
            let limitedInner = try rewrite(inner)
            let destination = try restriction(path.toMany.destinationEntity)
            let body: QueryPredicate
            switch quantifier {
            case .any, .none: body = QueryPredicate.conjunction([destination, limitedInner])
            case .all: body = destination == .constant(true) ? limitedInner : .or([.not(destination), limitedInner])
            }
            return QueryPredicate.conjunction(try readable(prefixes(path.toOneSteps)) + [.quantified(quantifier, path, body)])
        }
    }

    /// The operand rewritten; the to-one chains it reads are added to `chains`.
    private func rewrite(_ operand: QueryOperand, chains: inout [[RelationshipStep]], references: inout [[RelationshipStep]]) throws -> QueryOperand {
        switch operand {
        case .constant, .list:
            return operand
        case .attribute(let steps, _):
            chains += prefixes(steps)
            return operand
        case .object(let steps):
            // The last step is the reference itself, a value of the object
            // before it; a reference to an object the caller may not read
            // compares as neither nil nor that object.
            chains += prefixes(Array(steps.dropLast()))
            if !steps.isEmpty { references.append(steps) }
            return operand
        case .aggregate(let function, let path, let attribute):
            chains += prefixes(path.toOneSteps)
            let destination = path.toMany.destinationEntity
            let admitted = try restriction(destination)
            if admitted == .constant(true) { return operand }
            guard function == .count, attribute == nil else {
                throw StrataError(.accessDenied, "\(function.rawValue) over '\(path.toMany.relationship.name)' is not allowed: rule \(destination).read limits which \(destination) objects may be read, and the aggregate would include them all (@count counts only readable ones)")
            }
            return .subqueryCount(path, admitted)
        case .subqueryCount(let path, let inner):
            chains += prefixes(path.toOneSteps)
            let admitted = try restriction(path.toMany.destinationEntity)
            return .subqueryCount(path, QueryPredicate.conjunction([admitted, try rewrite(inner)]))
        case .function(let function, let arguments):
            var rewritten: [QueryOperand] = []
            for argument in arguments { rewritten.append(try rewrite(argument, chains: &chains, references: &references)) }
            return .function(function, rewritten)
        }
    }

    /// Every non-empty prefix of `steps`: each object on the way.
    private func prefixes(_ steps: [RelationshipStep]) -> [[RelationshipStep]] {
        steps.indices.map { Array(steps[...$0]) }
    }

    /// For each reference, that it is nil or names an object the caller
    /// may read.
    private func visible(_ references: [[RelationshipStep]]) throws -> [QueryPredicate] {
        var seen: Set<[RelationshipStep]> = []
        var conditions: [QueryPredicate] = []
        for steps in references where seen.insert(steps).inserted {
            guard let last = steps.last else { continue }
            let rule = try restriction(last.destinationEntity)
            if rule == .constant(true) { continue }
            let isNil = QueryPredicate.compare(QueryComparison(lhs: .object(steps), op: .equal, rhs: .constant(.null), domain: .object))
            conditions.append(.or([isNil, rule.rebased(onto: steps)]))
        }
        return conditions
    }

    /// The conditions that each chain's last object may be read.
    private func readable(_ chains: [[RelationshipStep]]) throws -> [QueryPredicate] {
        var seen: Set<[RelationshipStep]> = []
        var conditions: [QueryPredicate] = []
        for chain in chains where seen.insert(chain).inserted {
            guard let last = chain.last else { continue }
            let rule = try restriction(last.destinationEntity)
            if rule == .constant(true) { continue }
            conditions.append(rule.rebased(onto: chain))
        }
        return conditions
    }
}
