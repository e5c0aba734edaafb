import Foundation
import StrataContext
import StrataModel
import StrataQuery
import StrataWire

extension ServerCore {
    /// Runs a fetch, handing each batch to `send` (`more` is true for all
    /// but the last, which carries the total).
    func fetch(
        _ request: Strata_V1_FetchRequest,
        clientName: String,
        send: @escaping @Sendable (Strata_V1_FetchBatch, _ more: Bool) async throws -> Void
    ) async throws {
        let fetchRequest = try makeFetchRequest(request)
        let variables = try Self.variables(request.variables)
        let context = makeContext(clientName: clientName)
        let batchSize = request.batchSize == 0 ? WireProtocol.defaultFetchBatchSize : Int(request.batchSize)
        switch request.resultType {
        case .count:
            let count = try await context.count(fetchRequest, variables: variables)
            try await send(Strata_V1_FetchBatch.with { $0.count = UInt64(count) }, false)
        case .objectIds:
            let ids = try await context.fetchObjectIDs(fetchRequest, variables: variables)
            var start = 0
            repeat {
                let end = min(ids.count, start + batchSize)
                let last = end == ids.count
                try await send(Strata_V1_FetchBatch.with {
                    $0.objectIds = ids[start..<end].map(\.uriRepresentation)
                    if last { $0.count = UInt64(ids.count) }
                }, !last)
                start = end
            } while start < ids.count
        case .objects, .UNRECOGNIZED:
            let builder = ObjectStateBuilder(
                model: model,
                fetched: request.includeFetched,
                relationships: request.includeRelationships
            )
            try builder.validate(for: request.entity)
            try await context.perform { context in
                let objects = try await context.fetch(fetchRequest, variables: variables)
                var start = 0
                repeat {
                    let end = min(objects.count, start + batchSize)
                    let last = end == objects.count
                    var batch = Strata_V1_FetchBatch()
                    batch.objects.reserveCapacity(end - start)
                    for object in objects[start..<end] {
                        batch.objects.append(try await builder.state(of: object, in: context))
                    }
                    if last { batch.count = UInt64(objects.count) }
                    try await send(batch, !last)
                    start = end
                } while start < objects.count
            }
        }
    }

    /// The embedded fetch request a wire request describes; unknown
    /// entities and malformed predicates are INVALID_ARGUMENT.
    func makeFetchRequest(_ request: Strata_V1_FetchRequest) throws -> FetchRequest {
        guard model.entity(named: request.entity) != nil else {
            throw WireError(.invalidArgument, request.entity.isEmpty ? "fetch without an entity" : "unknown entity '\(request.entity)'", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        let predicate = try Self.predicate(request.predicate)
        return FetchRequest(
            entityName: request.entity,
            predicate: predicate,
            sortDescriptors: request.sort.map { StrataQuery.SortDescriptor($0.key, ascending: !$0.descending, caseInsensitive: $0.caseInsensitive) },
            fetchLimit: Int(request.limit),
            fetchOffset: Int(request.offset),
            includesSubentities: !request.excludeSubentities
        )
    }

    /// Parses predicate text; empty text is no predicate.
    static func predicate(_ text: String) throws -> StrataQuery.Predicate? {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
        return try PredicateParser.parseDetailed(text)
    }

    /// Predicate variables from the wire.
    static func variables(_ wire: [String: Strata_V1_VariableValue]) throws -> [String: VariableValue] {
        var variables: [String: VariableValue] = [:]
        for (name, value) in wire {
            switch value.kind {
            case .value(let v): variables[name] = .value(try PropertyValue(wire: v, field: "variable $\(name)"))
            case .list(let list): variables[name] = .list(try list.values.map { try PropertyValue(wire: $0, field: "variable $\(name)") })
            case .object(let object):
                var values: [String: PropertyValue] = [:]
                for (keyPath, value) in object.values {
                    values[keyPath] = try PropertyValue(wire: value, field: "variable $\(name).\(keyPath)")
                }
                variables[name] = .object(try PropertyValue.parseObjectID(object.id), values: values)
            case nil: variables[name] = .value(.null)
            }
        }
        return variables
    }
}
