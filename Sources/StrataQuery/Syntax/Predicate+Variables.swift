extension Predicate {
    /// Adds to `uses` how many times each variable is read (`$NAME` and
    /// `$NAME.key`), as the resolver binds them: inside a SUBQUERY its own
    /// variable names the current element, not a variable.
    func countVariableUses(into uses: inout [String: Int], subqueryVariable: String? = nil) {
        switch self {
        case .truePredicate, .falsePredicate:
            break
        case .not(let inner):
            inner.countVariableUses(into: &uses, subqueryVariable: subqueryVariable)
        case .and(let parts), .or(let parts):
            for part in parts { part.countVariableUses(into: &uses, subqueryVariable: subqueryVariable) }
        case .comparison(let comparison):
            comparison.lhs.countVariableUses(into: &uses, subqueryVariable: subqueryVariable)
            comparison.rhs.countVariableUses(into: &uses, subqueryVariable: subqueryVariable)
        }
    }
}

extension Expression {
    /// ``Predicate/countVariableUses(into:subqueryVariable:)`` of an expression.
    func countVariableUses(into uses: inout [String: Int], subqueryVariable: String?) {
        switch self {
        case .literal:
            break
        case .keyPath(.evaluatedObject, _, _):
            break
        case .keyPath(.variable(let name), _, _):
            if name != subqueryVariable { uses[name, default: 0] += 1 }
        case .keyPath(.subquery(let subquery), _, _):
            subquery.collection.countVariableUses(into: &uses, subqueryVariable: subqueryVariable)
            subquery.predicate.countVariableUses(into: &uses, subqueryVariable: subquery.variable)
        case .array(let elements, _), .function(_, let elements, _):
            for element in elements { element.countVariableUses(into: &uses, subqueryVariable: subqueryVariable) }
        case .cast(let inner, _, _):
            inner.countVariableUses(into: &uses, subqueryVariable: subqueryVariable)
        }
    }
}
