extension ObjectModel {
    /// Structural problems of the model (names, parents, destinations,
    /// inverses, configurations, constraints), every one at once.
    /// Expression problems (predicates, derivations) are checked by
    /// `ModelValidator` in StrataQuery, which includes these.
    ///
    /// The list starts with ``loadDiagnostics`` (unknown attribute types,
    /// unparsable defaults and bounds, unknown delete rules), followed by
    /// the problems of each entity in declaration order, then those of
    /// configurations and fetch request templates. Each diagnostic names
    /// ``sourceFile``, the line (when known), the entity and the property.
    ///
    /// Errors: empty or duplicate entity, property, configuration and
    /// template names; a property declared again by a subentity; unknown
    /// parents and inheritance cycles; unknown destinations and targets;
    /// inverses that are missing on the destination or do not point back;
    /// impossible counts and bounds; uniqueness constraints and fetch
    /// indexes naming unknown, transient or to-many properties;
    /// configurations listing unknown entities; persisted attributes without
    /// a type; derived attributes without an expression.
    /// Warnings: relationships without an inverse.
    public func structuralDiagnostics() -> [ModelDiagnostic] {
        var validator = StructuralValidator(model: self)
        return validator.run()
    }
}
