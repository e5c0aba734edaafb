import StrataModel
import StrataQuery

/// A condition a save must meet, checked by the store inside the save's
/// own transaction, so that no other write can come between the check and
/// the change: access rules (row-level security) of the objects a save
/// writes. A violation fails the save with
/// ``StrataError/Code/accessDenied`` and nothing of it is written.
public struct StoreGuard: Sendable, Hashable {
    /// When the condition is checked.
    public enum Phase: Sendable, Hashable {
        /// On the objects as stored before the save (updates and deletes).
        case before
        /// On the objects as the save leaves them (inserts and updates),
        /// before the transaction commits.
        case after
    }

    /// When the condition is checked.
    public var phase: Phase
    /// The objects the condition is about, as the change set names them
    /// (temporary IDs for its inserts).
    public var objectIDs: [ObjectID]
    /// What a violating object matches: its entity (subentities included)
    /// and a resolved predicate, typically `NOT (rule)`. Any of
    /// ``objectIDs`` it selects fails the save.
    public var violation: ResolvedFetch
    /// The failure's message (it names the entity and the rule).
    public var message: String

    /// Creates a guard.
    public init(phase: Phase, objectIDs: [ObjectID], violation: ResolvedFetch, message: String) {
        self.phase = phase
        self.objectIDs = objectIDs
        self.violation = violation
        self.message = message
    }

    /// The fetch of this guard's violating objects among `ids` (the
    /// permanent IDs of ``objectIDs``).
    public func violations(among ids: [ObjectID]) -> ResolvedFetch {
        var fetch = violation
        let selected = QueryPredicate.objects(in: ids)
        fetch.predicate = .and([selected, violation.predicate])
        fetch.sortKeys = []
        fetch.limit = nil
        fetch.offset = 0
        return fetch
    }

    /// The error of a violated guard.
    public var denial: StrataError { StrataError(.accessDenied, message) }
}
