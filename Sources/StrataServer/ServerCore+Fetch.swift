import Foundation
import NIOCore
import StrataContext
import StrataModel
import StrataQuery
import StrataStore
import StrataWire

extension ServerCore {
    /// Runs a fetch, handing each batch to `send` as the bytes of a
    /// `FetchBatch` message (`more` is true for all but the last, which
    /// carries the total).
    func fetch(
        _ request: Strata_V1_FetchRequest,
        clientName: String,
        policy: AccessPolicy? = nil,
        send: @escaping @Sendable (_ batch: ByteBuffer, _ more: Bool) async throws -> Void
    ) async throws {
        if case .UNRECOGNIZED(let raw) = request.resultType {
            // A newer client's kind of answer: guessing one would mislead it.
            throw WireError(.invalidArgument, "fetch result_type \(raw) is not one this server knows (OBJECTS 0, OBJECT_IDS 1, COUNT 2)", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        let fetchRequest = try makeFetchRequest(request)
        let variables = try Self.variables(request.variables)
        try policy?.requireReadable(fetchRequest.entityName)
        let batchSize = request.batchSize == 0 ? WireProtocol.defaultFetchBatchSize : Int(request.batchSize)
        if !request.storeID.isEmpty {
            try await fetchFromStore(request, fetchRequest, variables: variables, batchSize: batchSize, policy: policy, send: send)
            return
        }
        switch request.resultType {
        case .count:
            let count: Int
            if let store = soleStore(of: fetchRequest) {
                // What a fresh context counts (it has no unsaved object),
                // without making one.
                count = try await store.count(restricted(coordinator.resolver.resolve(fetchRequest, variables: variables), by: policy))
            } else {
                count = try await makeContext(clientName: clientName, policy: policy).count(fetchRequest, variables: variables)
            }
            try await send(Self.encoded(Strata_V1_FetchBatch.with { $0.count = UInt64(count) }), false)
        case .objectIds:
            let context = makeContext(clientName: clientName, policy: policy)
            let ids = try await context.fetchObjectIDs(fetchRequest, variables: variables).map(\.uriRepresentation)
            try await Self.sendInBatches(ids, batchSize: batchSize, send: send) { batch, slice in batch.objectIds = Array(slice) }
        case .objects, .UNRECOGNIZED:
            if request.includeFetched.isEmpty, request.includeRelationships.isEmpty,
               try policy.map({ try !mayHideReferences($0) }) ?? true,
               let store = soleStore(of: fetchRequest) {
                try await fetchRows(fetchRequest, variables: variables, from: store, batchSize: batchSize, policy: policy, send: send)
                return
            }
            let builder = ObjectStateBuilder(
                model: model,
                fetched: request.includeFetched,
                relationships: request.includeRelationships
            )
            try builder.validate(for: request.entity)
            try await makeContext(clientName: clientName, policy: policy).perform { context in
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
                    batch.objects = try await self.withoutHiddenReferences(batch.objects, policy: policy)
                    if last { batch.count = UInt64(objects.count) }
                    try await send(Self.encoded(batch), !last)
                    start = end
                } while start < objects.count
            }
        }
    }

    /// A fetch run on one store, answering rows as the store has them.
    private func fetchFromStore(
        _ request: Strata_V1_FetchRequest,
        _ fetchRequest: FetchRequest,
        variables: [String: VariableValue],
        batchSize: Int,
        policy: AccessPolicy?,
        send: @escaping @Sendable (_ batch: ByteBuffer, _ more: Bool) async throws -> Void
    ) async throws {
        guard let store = coordinator.store(identifier: request.storeID) else {
            throw WireError(.notFound, "no store '\(request.storeID)' is served here", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        guard request.includeFetched.isEmpty, request.includeRelationships.isEmpty else {
            throw WireError(.invalidArgument, "a fetch from one store (store_id) answers rows as stored: it cannot include fetched properties or to-many relationships", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        let resolved = try restricted(coordinator.resolver.resolve(fetchRequest, variables: variables), by: policy)
        switch request.resultType {
        case .count:
            let count = try await store.count(resolved)
            try await send(Self.encoded(Strata_V1_FetchBatch.with { $0.count = UInt64(count) }), false)
        case .objectIds:
            let ids = try await store.fetchObjectIDs(resolved).map(\.uriRepresentation)
            try await Self.sendInBatches(ids, batchSize: batchSize, send: send) { batch, slice in batch.objectIds = Array(slice) }
        case .objects, .UNRECOGNIZED:
            let states = try await withoutHiddenReferences(store.fetchSnapshots(resolved).map(Self.state(of:)), policy: policy)
            try await Self.sendInBatches(states, batchSize: batchSize, send: send) { batch, slice in batch.objects = Array(slice) }
        }
    }

    /// A fetch of objects that needs no context: rows of one store (no
    /// fetched property, no to-many relationship, no unsaved change to
    /// merge: a request's context is new), encoded as they come from the
    /// store into batches of `batchSize` without building a message per
    /// object. The answer is the one the context would give.
    private func fetchRows(
        _ fetchRequest: FetchRequest,
        variables: [String: VariableValue],
        from store: any PersistentStore,
        batchSize: Int,
        policy: AccessPolicy?,
        send: @escaping @Sendable (_ batch: ByteBuffer, _ more: Bool) async throws -> Void
    ) async throws {
        let resolved = try restricted(coordinator.resolver.resolve(fetchRequest, variables: variables), by: policy)
        let allocator = ByteBufferAllocator()
        // No connection's frames are larger: a batch past this is refused
        // as it is encoded, before it grows any further.
        let limit = configuration.maxFrameBytes
        var pending: [Snapshot] = []
        var total = 0
        // A full batch goes once a row beyond it has come, so that the
        // last frame (with the total) is never empty unless the result is.
        for try await rows in try await store.fetchSnapshotBatches(resolved) {
            pending.append(contentsOf: rows)
            total += rows.count
            var start = 0
            while pending.count - start > batchSize {
                var batch = allocator.buffer(capacity: min(256 * batchSize, limit))
                try ObjectStateEncoding.writeStates(of: pending[start..<start + batchSize], into: &batch, limit: limit)
                start += batchSize
                try await send(batch, true)
            }
            pending.removeFirst(start)
        }
        try Task.checkCancellation()
        var batch = allocator.buffer(capacity: min(256 * pending.count + 16, limit))
        try ObjectStateEncoding.writeStates(of: pending, into: &batch, limit: limit)
        ObjectStateEncoding.writeCount(UInt64(total), into: &batch)
        try await send(batch, false)
    }

    /// The one store holding every entity `request` selects; nil when
    /// they are spread over several (whose rows a context merges).
    func soleStore(of request: FetchRequest) -> (any PersistentStore)? {
        let entities = request.includesSubentities ? model.hierarchy(of: request.entityName) : [request.entityName]
        var found: (any PersistentStore)?
        for entity in entities {
            for store in coordinator.stores(for: entity) {
                if let found, found.identifier != store.identifier { return nil }
                found = store
            }
        }
        return found
    }

    /// `fetch` limited to what `policy` lets its caller read (as the
    /// caller's context limits its fetches).
    func restricted(_ fetch: ResolvedFetch, by policy: AccessPolicy?) throws -> ResolvedFetch {
        guard let policy else { return fetch }
        return try fetch.restricted(by: policy.readRestriction)
    }

    /// A `FetchBatch` message's bytes.
    static func encoded(_ batch: Strata_V1_FetchBatch) throws -> ByteBuffer {
        ByteBuffer(bytes: try batch.serializedBytes() as [UInt8])
    }

    /// A stored row as the wire carries it (nil values left out).
    static func state(of snapshot: Snapshot) -> Strata_V1_ObjectState {
        Strata_V1_ObjectState.with { state in
            state.id = snapshot.objectID.uriRepresentation
            state.entity = snapshot.objectID.entityName
            state.version = snapshot.version
            for (key, value) in snapshot.values where !value.isNull {
                state.values[key] = value.wire
            }
        }
    }

    /// Sends `items` in frames of `batchSize`, the last with the total.
    static func sendInBatches<Item>(
        _ items: [Item],
        batchSize: Int,
        send: @Sendable (_ batch: ByteBuffer, _ more: Bool) async throws -> Void,
        fill: (inout Strata_V1_FetchBatch, ArraySlice<Item>) -> Void
    ) async throws {
        var start = 0
        repeat {
            let end = min(items.count, start + batchSize)
            let last = end == items.count
            var batch = Strata_V1_FetchBatch()
            fill(&batch, items[start..<end])
            if last { batch.count = UInt64(items.count) }
            try await send(encoded(batch), !last)
            start = end
        } while start < items.count
    }

    /// The embedded fetch request a wire request describes; unknown
    /// entities and malformed predicates are INVALID_ARGUMENT.
    func makeFetchRequest(_ request: Strata_V1_FetchRequest) throws -> FetchRequest {
        guard model.containsEntity(named: request.entity) else {
            throw WireError(.invalidArgument, request.entity.isEmpty ? "fetch without an entity" : "unknown entity '\(request.entity)'", strataCode: StrataError.Code.invalidValue.rawValue)
        }
        let predicate = try predicates.predicate(request.predicate)
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
        var variables = [String: VariableValue](minimumCapacity: wire.count)
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
