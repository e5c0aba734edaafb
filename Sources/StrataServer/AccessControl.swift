import NIOConcurrencyHelpers
import StrataAuth
import StrataQuery

/// The access rules a server enforces, replaceable while it runs (SIGHUP):
/// requests that start after ``replace(_:)`` use the new rules.
public final class AccessControl: Sendable {
    private let current: NIOLockedValueBox<(rules: AccessRules, generation: UInt64)>

    /// Enforces `rules`.
    public init(_ rules: AccessRules) {
        current = NIOLockedValueBox((rules, 0))
    }

    /// The rules in force and their generation (bumped by each replace).
    var rules: (rules: AccessRules, generation: UInt64) { current.withLockedValue { $0 } }

    /// The generation of the rules in force, without copying them.
    var generation: UInt64 { current.withLockedValue { $0.generation } }

    /// The rule in force for `operation` on `entity`, read without copying
    /// the rules.
    func rule(_ operation: AccessRules.Operation, for entity: String) -> AccessRules.Rule {
        current.withLockedValue { $0.rules.rule(operation, for: entity) }
    }

    /// Enforces `rules` from now on.
    public func replace(_ rules: AccessRules) {
        current.withLockedValue { $0 = (rules, $0.generation &+ 1) }
    }

    /// The policy of one caller; nil for `admin`, whom rules do not bind.
    func policy(for identity: Identity, resolver: PredicateResolver) -> AccessPolicy? {
        identity.isAdmin ? nil : AccessPolicy(control: self, identity: identity, resolver: resolver)
    }
}
