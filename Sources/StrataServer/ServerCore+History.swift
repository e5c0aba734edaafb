import Foundation
import StrataContext
import StrataModel
import StrataStore
import StrataWire

extension ServerCore {
    /// The most transactions one history request answers.
    static let maximumHistoryLimit: UInt32 = 10_000
    /// Transactions answered when the request gives no limit.
    static let defaultHistoryLimit = 1_000

    /// Answers a history request: records the consumer's token when asked,
    /// then the transactions after the token (see `HistoryRequest` in
    /// `Protocol/strata.proto`).
    func history(_ request: Strata_V1_HistoryRequest) async throws -> Strata_V1_HistoryResponse {
        let store = try historyStore(named: request.store)
        let limit = request.limit == 0 ? Self.defaultHistoryLimit : Int(min(request.limit, Self.maximumHistoryLimit))
        var after: HistoryToken?
        if request.hasAfterToken {
            guard let value = Int64(exactly: request.afterToken) else {
                throw WireError(.invalidArgument, "history token \(request.afterToken) is out of range")
            }
            after = HistoryToken(storeIdentifier: store.identifier, value: value)
        }
        if !request.consumer.isEmpty {
            guard let after else {
                throw WireError(.invalidArgument, "history consumer '\(request.consumer)' needs after_token: the token it has merged up to")
            }
            try await store.recordConsumer(request.consumer, token: after)
        }
        let transactions = try await store.history(after: after, limit: limit)
        let current = try await store.currentHistoryToken()
        return Strata_V1_HistoryResponse.with { response in
            response.storeID = store.identifier
            response.currentToken = UInt64(max(0, current.value))
            response.transactions = transactions.map(Self.wire)
        }
    }

    /// The store a history request names (see ``namedStore(_:)``), if it
    /// records history.
    private func historyStore(named name: String) throws -> any HistoryTrackingStore {
        let found = try namedStore(name)
        guard let tracking = found as? any HistoryTrackingStore else {
            throw WireError(.failedPrecondition, "store \(found.storeDescription.displayName) (\(found.storeDescription.type.rawValue)) does not record persistent history; only SQLite stores do")
        }
        return tracking
    }

    static func wire(_ transaction: HistoryTransaction) -> Strata_V1_HistoryTransaction {
        Strata_V1_HistoryTransaction.with { wire in
            wire.token = UInt64(max(0, transaction.token.value))
            wire.timestampMicros = Int64((transaction.timestamp.timeIntervalSince1970 * 1_000_000).rounded())
            wire.author = transaction.author ?? ""
            wire.contextName = transaction.contextName ?? ""
            wire.processID = transaction.processID
            wire.origin = transaction.origin
            wire.changes = transaction.changes.map { change in
                Strata_V1_HistoryChange.with {
                    switch change.kind {
                    case .insert: $0.kind = .insert
                    case .update: $0.kind = .update
                    case .delete: $0.kind = .delete
                    }
                    $0.id = change.objectID.uriRepresentation
                    $0.entity = change.objectID.entityName
                    $0.version = change.version
                    $0.changedKeys = change.changedProperties
                    $0.tombstone = change.tombstone.mapValues(\.wire)
                }
            }
        }
    }
}
