import StrataContext
import StrataModel
import StrataWire

extension ServerCore {
    /// Current values, versions and fetched properties of the objects asked
    /// for, read afresh from their stores.
    func refresh(_ request: Strata_V1_RefreshRequest, clientName: String) async throws -> Strata_V1_RefreshResponse {
        let ids = try request.ids.map(PropertyValue.parseObjectID)
        let model = self.model
        for id in ids where model.entity(named: id.entityName) == nil {
            throw WireError(.invalidArgument, "refresh \(id): unknown entity '\(id.entityName)'", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        let builder = ObjectStateBuilder(
            model: model,
            fetched: request.skipFetched ? [] : (request.includeFetched.isEmpty ? nil : request.includeFetched),
            relationships: request.includeRelationships
        )
        for entity in Set(ids.map(\.entityName)) where !request.includeFetched.isEmpty || !request.includeRelationships.isEmpty {
            try builder.validate(for: entity)
        }
        let context = makeContext(clientName: clientName)
        return try await context.perform { context in
            var response = Strata_V1_RefreshResponse()
            for id in ids {
                guard !id.isTemporary, (try? context.coordinator.store(for: id)) != nil else {
                    response.missing.append(id.uriRepresentation)
                    continue
                }
                let object: ManagedObject
                do {
                    object = try await context.existingObject(with: id)
                } catch let error as StrataError where error.code == .objectNotFound {
                    response.missing.append(id.uriRepresentation)
                    continue
                }
                response.objects.append(try await builder.state(of: object, in: context))
            }
            return response
        }
    }
}
