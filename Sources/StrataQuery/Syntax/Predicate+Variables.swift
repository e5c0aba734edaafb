extension Predicate {
    /// Appends to `uses` each place a variable is read (`$NAME` and
    /// `$NAME.key`), as the resolver binds them: inside a SUBQUERY its own
    /// variable names the current element, not a variable.
    func collectVariableUses(into uses: inout [VariableUse], subqueryVariable: String? = nil) {
        switch self {
        case .truePredicate, .falsePredicate:
            break
        case .not(let inner):
            inner.collectVariableUses(into: &uses, subqueryVariable: subqueryVariable)
        case .and(let parts), .or(let parts):
            for part in parts { part.collectVariableUses(into: &uses, subqueryVariable: subqueryVariable) }
        case .comparison(let comparison):
            comparison.lhs.collectVariableUses(into: &uses, subqueryVariable: subqueryVariable)
            comparison.rhs.collectVariableUses(into: &uses, subqueryVariable: subqueryVariable)
        }
    }
}

extension Expression {
    /// ``Predicate/collectVariableUses(into:subqueryVariable:)`` of an expression.
    func collectVariableUses(into uses: inout [VariableUse], subqueryVariable: String?) {
        switch self {
        case .literal:
            break
        case .keyPath(.evaluatedObject, _, _):
            break
        case .keyPath(.variable(let name), _, let range):
            if name != subqueryVariable { uses.append(VariableUse(name: name, range: range)) }
        case .keyPath(.subquery(let subquery), _, _):
            subquery.collection.collectVariableUses(into: &uses, subqueryVariable: subqueryVariable)
            subquery.predicate.collectVariableUses(into: &uses, subqueryVariable: subquery.variable)
        case .array(let elements, _), .function(_, let elements, _):
            for element in elements { element.collectVariableUses(into: &uses, subqueryVariable: subqueryVariable) }
        case .cast(let inner, _, _):
            inner.collectVariableUses(into: &uses, subqueryVariable: subqueryVariable)
        }
    }
}
