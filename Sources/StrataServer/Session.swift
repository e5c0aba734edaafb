import Foundation
import Logging
import StrataAuth
import StrataContext
import StrataModel
import StrataQuery
import StrataWire
import Tracing

/// One client connection's state: its hello, its subscriptions, and the
/// task that pushes change notifications to it. Requests themselves run
/// concurrently, each in a context of its own, so pipelined saves never
/// see each other's half-applied changes.
actor Session {
    /// A subscription's filter.
    struct Subscription: Sendable {
        var entity: String?
        var predicate: StrataQuery.Predicate?
        var variables: [String: VariableValue]
        /// False until the subscribe is answered; notifications wait in
        /// the backlog so none reaches the client before that answer.
        var ready = false
        var backlog: [Strata_V1_ChangeNotification] = []
    }

    let core: ServerCore
    let writer: ResponseWriter
    let logger: Logger
    private(set) var clientName = ""
    /// Who the hello proved the client to be.
    private(set) var identity = Identity.anonymous
    private var subscriptions: [UInt64: Subscription] = [:]
    private var nextSubscriptionID: UInt64 = 0
    private var notifier: Task<Void, Never>?
    /// When the client last sent a frame (read without a hop onto the actor).
    nonisolated var activity: ActivityClock { writer.state.activity }

    init(core: ServerCore, writer: ResponseWriter, logger: Logger) {
        self.core = core
        self.writer = writer
        self.logger = logger
    }

    /// Whether the connection has something to wait for (a subscription).
    var hasSubscriptions: Bool { !subscriptions.isEmpty }

    /// Handles the hello: answers it, or sends the refusal and throws.
    func hello(_ frame: Strata_V1_ClientFrame, certificateSubject: String? = nil) async throws {
        guard case .hello(let hello)? = frame.request else {
            throw WireError(.failedPrecondition, "the first request on a connection must be hello")
        }
        let (response, identity) = try await core.hello(hello, certificateSubject: certificateSubject)
        self.identity = identity
        clientName = hello.clientName.isEmpty ? "client" : hello.clientName
        // Frames read from now on may be as large as the hello's answer says.
        writer.state.helloAccepted()
        try await writer.send(requestID: frame.requestID, .hello(response))
        if response.compression { writer.enableCompression() }
        // Only now may the event loop answer requests itself: no answer
        // can precede the hello's.
        // An identity someone proved (a token or a certificate), not the
        // anonymous one of a server that asks no one.
        let proved = core.authenticator != nil || certificateSubject != nil
        writer.state.greeted(clientName: clientName, identity: proved ? identity : nil, policy: core.policy(for: proved ? identity : nil))
    }

    /// Runs one request after the hello and sends its answer.
    nonisolated func handle(_ frame: Strata_V1_ClientFrame, clientName: String) async {
        let started = ContinuousClock.now
        let requestID = frame.requestID
        let operation = Self.operationName(frame.request)
        var failed = false
        let span = Self.startSpan(core.tracer, operation: operation, requestID: requestID, request: frame.request)
        core.stats.requestStarted()
        defer {
            core.stats.requestFinished()
            span.end()
        }
        do {
            guard requestID != 0 else {
                throw WireError(.invalidArgument, "request_id 0 is reserved for server pushes")
            }
            switch frame.request {
            case .hello?:
                throw WireError(.failedPrecondition, "hello was already exchanged on this connection")
            case .ping(let ping)?:
                try await writer.send(requestID: requestID, .ping(Strata_V1_PingResponse.with {
                    $0.payload = ping.payload
                    $0.serverTimeMicros = Int64(Date().timeIntervalSince1970 * 1_000_000)
                }))
            case .getModel?:
                try await writer.send(requestID: requestID, .model(core.modelResponse))
            case .fetch(let fetch)?:
                let writer = self.writer
                let slots = fetch.resultType == .count ? nil : writer.state.fetchSlots
                await slots?.acquire()
                defer { slots?.release() }
                try Task.checkCancellation()
                try await core.fetch(fetch, clientName: clientName, policy: writer.state.policy) { batch, more in
                    // The connection closed: no batch more.
                    try Task.checkCancellation()
                    try await writer.send(requestID: requestID, more: more, fetchBatch: batch)
                }
            case .save(let save)?:
                let response = try await core.save(save, clientName: clientName, identity: writer.state.identity, policy: writer.state.policy)
                try await writer.send(requestID: requestID, .save(response))
            case .refresh(let refresh)?:
                let response = try await core.refresh(refresh, clientName: clientName, policy: writer.state.policy)
                try await writer.send(requestID: requestID, .refresh(response))
            case .subscribe(let subscribe)?:
                let id = try await self.subscribe(subscribe)
                try await writer.send(requestID: requestID, .subscribe(Strata_V1_SubscribeResponse.with { $0.subscriptionID = id }))
                await activate(id)
            case .unsubscribe(let unsubscribe)?:
                try await self.unsubscribe(unsubscribe.subscriptionID)
                try await writer.send(requestID: requestID, .unsubscribe(Strata_V1_UnsubscribeResponse()))
            case .stats?:
                try await writer.send(requestID: requestID, .stats(core.statsResponse()))
            case .history(let history)?:
                if let policy = writer.state.policy {
                    throw StrataError(.accessDenied, "history is for the admin role while access rules are in force (it lists every object's changes); \(policy.identity.subject) is not admin")
                }
                let response = try await core.history(history)
                try await writer.send(requestID: requestID, .history(response))
            case .backup(let backup)?:
                if let policy = writer.state.policy {
                    throw StrataError(.accessDenied, "backup is for the admin role while access rules are in force (a copy holds every object); \(policy.identity.subject) is not admin")
                }
                // A backup streams like a large fetch: it takes a slot.
                let writer = self.writer
                let slots = writer.state.fetchSlots
                await slots.acquire()
                defer { slots.release() }
                try await core.backup(backup) { chunk, more in
                    try Task.checkCancellation()
                    try await writer.send(requestID: requestID, more: more, .backup(chunk))
                }
            case nil:
                throw WireError(.unimplemented, "request \(requestID) names no operation this server knows (protocol \(WireProtocol.version.major).\(WireProtocol.version.minor))")
            }
        } catch {
            failed = true
            let status = Self.failureStatus(error, operation: operation, requestID: requestID, redactor: core.redactor, logger: logger)
            Self.failed(span, status: status)
            try? await writer.send(requestID: requestID, status: status)
        }
        core.stats.record(operation: operation, duration: .now - started, failed: failed)
    }

    /// A request's span from `tracer` (``ServerCore/tracer``: a no-op
    /// unless a tracer is bootstrapped, e.g. swift-otel's): a server span named `strata.OPERATION`, with the
    /// operation, the request ID and the entity the request is about.
    static func startSpan(_ tracer: any Tracer, operation: String, requestID: UInt64, request: Strata_V1_ClientFrame.OneOf_Request?,
                          at instant: DefaultTracerClock.Instant = DefaultTracerClock.now) -> any Span {
        startSpan(tracer, operation: operation, requestID: requestID, entity: entity(of: request), at: instant)
    }

    /// ``startSpan(_:operation:requestID:request:at:)`` for a request about
    /// `entity` (worked out only when the span records).
    static func startSpan(_ tracer: any Tracer, operation: String, requestID: UInt64, entity: @autoclosure () -> String?,
                          at instant: DefaultTracerClock.Instant = DefaultTracerClock.now) -> any Span {
        let span: any Span = tracer.startSpan("strata.\(operation)", ofKind: .server, at: instant)
        // Without a tracer (the default) nothing is recorded: the
        // attributes, the save's set of entities above all, are not made.
        guard span.isRecording else { return span }
        span.attributes["strata.operation"] = operation
        span.attributes["strata.request_id"] = Int(truncatingIfNeeded: requestID)
        if let entity = entity() { span.attributes["strata.entity"] = entity }
        return span
    }

    /// Marks a request's span as failed with `status`.
    static func failed(_ span: any Span, status: Strata_V1_Status) {
        span.setStatus(SpanStatus(code: .error, message: "\(status.code)"))
        span.attributes["strata.status"] = "\(status.code)"
    }

    /// The entities a save names, as ``entity(of:)`` names a wire save's.
    static func entity(of save: SaveRequest) -> String? {
        let entities = Set(save.inserts.map(\.entity) + save.updates.map(\.id.entityName) + save.deletes.map(\.id.entityName))
        return entities.isEmpty ? nil : entities.sorted().joined(separator: ",")
    }

    /// The entity a request is about, when it names one (for its span).
    static func entity(of request: Strata_V1_ClientFrame.OneOf_Request?) -> String? {
        switch request {
        case .fetch(let fetch)?: return fetch.entity
        case .subscribe(let subscribe)? where !subscribe.entity.isEmpty: return subscribe.entity
        case .save(let save)?:
            let entities = Set(save.inserts.map(\.entity) + (save.updates.map(\.id) + save.deletes.map(\.id)).compactMap { try? PropertyValue.parseObjectID($0).entityName })
            return entities.isEmpty ? nil : entities.sorted().joined(separator: ",")
        case .refresh(let refresh)?:
            let entities = Set(refresh.ids.compactMap { try? PropertyValue.parseObjectID($0).entityName })
            return entities.isEmpty ? nil : entities.sorted().joined(separator: ",")
        default: return nil
        }
    }

    /// The status answering a failed request, logged: an error for an
    /// internal failure, a debug line for a refusal. The log keeps the
    /// whole message; the answer has no file-system paths.
    static func failureStatus(_ error: any Error, operation: String, requestID: UInt64, redactor: PathRedactor, logger: Logger) -> Strata_V1_Status {
        var status = RequestFailure.status(for: error)
        if status.code == .internal {
            logger.error("request failed", metadata: ["operation": "\(operation)", "request": "\(requestID)", "error": "\(error)"])
        } else {
            logger.debug("request refused", metadata: ["operation": "\(operation)", "request": "\(requestID)", "status": "\(status.code)", "message": "\(status.message)"])
        }
        status.message = redactor.redact(status.message)
        status.details = status.details.map(redactor.redact)
        return status
    }

    static func operationName(_ request: Strata_V1_ClientFrame.OneOf_Request?) -> String {
        switch request {
        case .hello?: "hello"
        case .ping?: "ping"
        case .getModel?: "get_model"
        case .fetch?: "fetch"
        case .save?: "save"
        case .refresh?: "refresh"
        case .subscribe?: "subscribe"
        case .unsubscribe?: "unsubscribe"
        case .stats?: "stats"
        case .history?: "history"
        case .backup?: "backup"
        case nil: "unknown"
        }
    }

    // MARK: Subscriptions

    private func subscribe(_ request: Strata_V1_SubscribeRequest) throws -> UInt64 {
        let limit = core.configuration.maxSubscriptionsPerConnection
        guard subscriptions.count < limit else {
            throw WireError(.resourceExhausted, "this connection holds \(limit) subscriptions, the most the server allows one connection; unsubscribe first")
        }
        let subscription = try Self.subscription(for: request, core: core)
        if let entity = subscription.entity { try writer.state.policy?.requireReadable(entity) }
        nextSubscriptionID += 1
        subscriptions[nextSubscriptionID] = subscription
        core.stats.subscriptions(changedBy: 1)
        startNotifier()
        return nextSubscriptionID
    }

    /// A subscribe request checked against the model: its entity, its
    /// predicate type-checked with its variables (so a bad predicate fails
    /// the subscribe, not a push).
    static func subscription(for request: Strata_V1_SubscribeRequest, core: ServerCore) throws -> Subscription {
        let model = core.model
        var subscription = Subscription(entity: nil, predicate: nil, variables: [:])
        if !request.entity.isEmpty {
            guard model.containsEntity(named: request.entity) else {
                throw WireError(.invalidArgument, "subscribe: unknown entity '\(request.entity)'", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            subscription.entity = request.entity
        }
        if let predicate = try core.predicates.predicate(request.predicate) {
            guard let entity = subscription.entity else {
                throw WireError(.invalidArgument, "subscribe: a predicate needs an entity to be resolved against", strataCode: StrataError.Code.invalidValue.rawValue)
            }
            let variables = try ServerCore.variables(request.variables)
            _ = try core.coordinator.resolver.resolve(FetchRequest(entityName: entity, predicate: predicate), variables: variables)
            subscription.predicate = predicate
            subscription.variables = variables
        }
        return subscription
    }

    /// Sends what waited for the subscribe's answer, then lets
    /// notifications flow directly.
    private func activate(_ id: UInt64) async {
        while let first = subscriptions[id]?.backlog.first {
            subscriptions[id]?.backlog.removeFirst()
            guard await push(first) else { break }
        }
        subscriptions[id]?.backlog.removeAll()
        subscriptions[id]?.ready = true
    }

    private func unsubscribe(_ id: UInt64) throws {
        guard subscriptions.removeValue(forKey: id) != nil else {
            throw WireError(.notFound, "no subscription \(id) on this connection")
        }
        core.stats.subscriptions(changedBy: -1)
        if subscriptions.isEmpty {
            notifier?.cancel()
            notifier = nil
        }
    }

    /// Starts listening to committed saves (registered before the subscribe
    /// is answered, so no save after the answer is missed).
    private func startNotifier() {
        guard notifier == nil else { return }
        let stream = core.coordinator.changes.subscribe()
        notifier = Task { [weak self] in
            for await changes in stream {
                guard let self else { return }
                await self.deliver(changes)
            }
        }
    }

    /// Pushes one committed save to every matching subscription.
    private func deliver(_ changes: ChangeSet) async {
        let model = core.model
        // Access rules: what this subscriber may be told (nil: everything).
        let policy = writer.state.policy
        let visibility = policy.map { SubscriptionVisibility(policy: $0, model: model) }
        for (id, subscription) in subscriptions.sorted(by: { $0.key < $1.key }) {
            func wanted(_ objectID: ObjectID) -> Bool {
                guard let entity = subscription.entity else { return true }
                return model.isEntity(objectID.entityName, kindOf: entity)
            }
            var inserted = changes.inserted.filter(wanted)
            var updated = changes.updated.keys.filter(wanted)
            var deleted = changes.deleted.filter(wanted)
            if let visibility {
                // Deletions of objects it could read; changed objects it
                // could read that it may no longer read leave its sight.
                deleted = deleted.filter { visibility.couldReadBefore($0, in: changes) }
                if !updated.isEmpty {
                    do {
                        let readable = try await core.readableIDs(updated, policy: policy)
                        deleted += updated.filter { !readable.contains($0) && visibility.couldReadBefore($0, in: changes) }
                        updated = updated.filter(readable.contains)
                    } catch {
                        logger.warning("subscription access check failed", metadata: ["subscription": "\(id)", "error": "\(error)"])
                        continue
                    }
                }
                if !inserted.isEmpty {
                    do {
                        let readable = try await core.readableIDs(inserted, policy: policy)
                        inserted = inserted.filter(readable.contains)
                    } catch {
                        logger.warning("subscription access check failed", metadata: ["subscription": "\(id)", "error": "\(error)"])
                        continue
                    }
                }
            }
            if let predicate = subscription.predicate, let entity = subscription.entity, !(inserted.isEmpty && updated.isEmpty) {
                do {
                    let matching = try await matchingIDs(inserted + updated, entity: entity, predicate: predicate, variables: subscription.variables)
                    inserted = inserted.filter(matching.contains)
                    updated = updated.filter(matching.contains)
                } catch {
                    logger.warning("subscription predicate failed", metadata: ["subscription": "\(id)", "error": "\(error)"])
                    continue
                }
            }
            guard !(inserted.isEmpty && updated.isEmpty && deleted.isEmpty) else { continue }
            let notification = Strata_V1_ChangeNotification.with { note in
                note.subscriptionID = id
                note.origin = changes.contextName ?? ""
                note.inserted = inserted.map { objectID in
                    Strata_V1_ChangedObject.with {
                        $0.id = objectID.uriRepresentation
                        $0.entity = objectID.entityName
                        $0.version = changes.versions[objectID] ?? 1
                    }
                }
                note.updated = updated.sorted { $0.uriRepresentation < $1.uriRepresentation }.map { objectID in
                    Strata_V1_ChangedObject.with {
                        $0.id = objectID.uriRepresentation
                        $0.entity = objectID.entityName
                        $0.version = changes.versions[objectID] ?? 0
                        $0.changedKeys = (changes.updated[objectID] ?? []).sorted()
                    }
                }
                note.deleted = deleted.map { objectID in
                    Strata_V1_ChangedObject.with {
                        $0.id = objectID.uriRepresentation
                        $0.entity = objectID.entityName
                    }
                }
            }
            guard let current = subscriptions[id] else { continue }
            guard current.ready else {
                subscriptions[id]?.backlog.append(notification)
                continue
            }
            guard await push(notification) else { return }
        }
    }

    /// Sends one notification; false when the connection is gone. A
    /// notification too large for a frame is dropped (and logged), the
    /// others still flow.
    private func push(_ notification: Strata_V1_ChangeNotification) async -> Bool {
        do {
            try await writer.send(requestID: 0, .notification(notification))
            return true
        } catch let error as WireError where error.code == .resourceExhausted {
            logger.warning("notification dropped: too large for a frame", metadata: ["subscription": "\(notification.subscriptionID)", "error": "\(error.message)"])
            return true
        } catch {
            return false
        }
    }

    /// The IDs among `ids` whose current state matches the predicate.
    private func matchingIDs(_ ids: [ObjectID], entity: String, predicate: StrataQuery.Predicate, variables: [String: VariableValue]) async throws -> Set<ObjectID> {
        let context = core.makeContext(clientName: "subscriptions", policy: writer.state.policy)
        return try await context.perform { context in
            let objects = ids.map { context.object(with: $0) }
            let matching = try await context.objects(objects, of: entity, matching: predicate, variables: variables)
            return Set(matching.map(\.objectID))
        }
    }

    /// Stops pushing notifications (the connection is closing).
    func close() {
        notifier?.cancel()
        notifier = nil
        core.stats.subscriptions(changedBy: -subscriptions.count)
        subscriptions.removeAll()
    }
}
