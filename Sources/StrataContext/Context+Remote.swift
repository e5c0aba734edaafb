import StrataModel
import StrataQuery

extension Context {
    /// Makes a loaded object's changes count as based on an older state:
    /// the `version` a remote client read and, for the properties it names,
    /// the values it read then. A save then detects a conflict when the
    /// store has moved past `version` and resolves it with the merge policy
    /// exactly as for changes made in this context. For servers that replay
    /// a client's change set; call it before setting the new values.
    ///
    /// Throws 133000 for an object that is a fault or was never saved.
    public func rebase(_ object: ManagedObject, onVersion version: Int64, values: [String: PropertyValue] = [:]) throws {
        guard var committed = object.committed, !object.isInserted else {
            throw StrataError(.objectNotFound, "\(object.objectID) is not loaded from its store: only saved, loaded objects can be rebased")
        }
        guard version != object.version || !values.isEmpty else { return }
        for (key, value) in values where model.attribute(named: key, in: object.entityName)?.isPersisted == true
            || model.relationship(named: key, in: object.entityName).map({ !$0.isToMany && !$0.isTransient }) == true {
            committed[key] = value
        }
        let moved = version != object.version
        object.committed = committed
        object.version = version
        object.keepsUnchangedValues = moved
        object.committedToMany.removeAll()
    }

    /// The objects among `objects` that match `predicate` (resolved against
    /// `entityName`), judged by their current values in this context.
    /// Faults and relationships the predicate reaches are loaded as needed.
    public func objects(
        _ objects: [ManagedObject],
        of entityName: String,
        matching predicate: StrataQuery.Predicate,
        variables: [String: VariableValue] = [:]
    ) async throws -> [ManagedObject] {
        guard !objects.isEmpty else { return [] }
        let resolved = try restricted(coordinator.resolver.resolve(FetchRequest(entityName: entityName, predicate: predicate), variables: variables))
        try await load(objects, tolerateMissing: true)
        let live = objects.filter { !$0.isFault }
        let model = self.model
        return try await evaluateLoading { accessor in
            let evaluator = try FetchEvaluator(resolved, model: model, accessor: accessor)
            return try live.filter { try evaluator.matches($0) }
        }
    }
}
