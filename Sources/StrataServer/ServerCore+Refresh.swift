import StrataContext
import StrataModel
import StrataStore
import StrataWire

extension ServerCore {
    /// Current values, versions and fetched properties of the objects asked
    /// for, read afresh from their stores.
    func refresh(_ request: Strata_V1_RefreshRequest, clientName: String, policy: AccessPolicy? = nil) async throws -> Strata_V1_RefreshResponse {
        let asked = try request.ids.map(PropertyValue.parseObjectID)
        let model = self.model
        for id in asked where !model.containsEntity(named: id.entityName) {
            throw WireError(.invalidArgument, "refresh \(id): unknown entity '\(id.entityName)'", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        // An object the caller may not read is answered as one that does
        // not exist: existence does not leak.
        let hidden: Set<ObjectID>
        if policy != nil {
            let readable = try await readableIDs(asked, policy: policy)
            hidden = Set(asked.filter { !readable.contains($0) })
        } else {
            hidden = []
        }
        let ids = asked
        let builder = ObjectStateBuilder(
            model: model,
            fetched: request.skipFetched ? [] : (request.includeFetched.isEmpty ? nil : request.includeFetched),
            relationships: request.includeRelationships
        )
        for entity in Set(ids.map(\.entityName)) where !request.includeFetched.isEmpty || !request.includeRelationships.isEmpty {
            try builder.validate(for: entity)
        }
        if request.includeRelationships.isEmpty,
           request.skipFetched || ids.allSatisfy({ model.fetchedProperties(of: $0.entityName).isEmpty }) {
            var response = try await rows(ids, hidden: hidden)
            response.objects = try await withoutHiddenReferences(response.objects, policy: policy)
            return response
        }
        let context = makeContext(clientName: clientName, policy: policy)
        var response = try await context.perform { context in
            var response = Strata_V1_RefreshResponse()
            for id in ids {
                guard !id.isTemporary, !hidden.contains(id), (try? context.coordinator.store(for: id)) != nil else {
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
        response.objects = try await withoutHiddenReferences(response.objects, policy: policy)
        return response
    }

    /// A get: the objects' rows as stored, through the coordinator's row
    /// cache, with no context (nothing to evaluate).
    private func rows(_ ids: [ObjectID], hidden: Set<ObjectID>) async throws -> Strata_V1_RefreshResponse {
        var byStore: [String: [ObjectID]] = [:]
        var response = Strata_V1_RefreshResponse()
        for id in ids {
            if id.isTemporary || hidden.contains(id) || coordinator.store(identifier: id.storeIdentifier) == nil {
                continue
            }
            byStore[id.storeIdentifier, default: []].append(id)
        }
        var found: [ObjectID: Snapshot] = [:]
        for (identifier, group) in byStore {
            guard let store = coordinator.store(identifier: identifier) else { continue }
            for snapshot in try await coordinator.snapshots(for: group, in: store) {
                found[snapshot.objectID] = snapshot
            }
        }
        for id in ids {
            if let snapshot = found[id] {
                response.objects.append(Self.state(of: snapshot))
            } else {
                response.missing.append(id.uriRepresentation)
            }
        }
        return response
    }
}
