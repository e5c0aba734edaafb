import NIOConcurrencyHelpers
import StrataAuth
import StrataContext
import StrataModel
import StrataQuery
import StrataStore

/// The access rules as they bind one caller (never `admin`): each rule
/// resolved with the caller's `$AUTH` values, for the reads a context runs
/// (``readRestriction``) and the guards a save carries
/// (``guards(for:)``). Rules replaced meanwhile (SIGHUP) are picked up at
/// the next use.
final class AccessPolicy: Sendable {
    let control: AccessControl
    let identity: Identity
    private let resolver: PredicateResolver
    /// A resolved rule's place in the cache (no text is made to look one up).
    private struct Key: Hashable {
        let operation: AccessRules.Operation
        let entity: String
    }

    /// Resolved rules by operation and entity, for one rules generation.
    private let cache = NIOLockedValueBox<(generation: UInt64, predicates: [Key: QueryPredicate])>((0, [:]))

    init(control: AccessControl, identity: Identity, resolver: PredicateResolver) {
        self.control = control
        self.identity = identity
        self.resolver = resolver
    }

    /// The rule for `operation` on `entity` now.
    func rule(_ operation: AccessRules.Operation, for entity: String) -> AccessRules.Rule {
        control.rule(operation, for: entity)
    }

    /// The rule resolved for this caller: what objects it admits;
    /// `.constant(false)` for an admin-only rule.
    func predicate(_ operation: AccessRules.Operation, for entity: String) throws -> QueryPredicate {
        try resolved(operation, for: entity).predicate
    }

    /// ``predicate(_:for:)`` with the generation of the rules it was
    /// resolved from. This policy resolves a rule the same way for as long
    /// as the generation stays: what a caller makes of the predicate (an
    /// evaluator) serves this policy until the generation changes.
    func resolved(_ operation: AccessRules.Operation, for entity: String) throws -> (predicate: QueryPredicate, generation: UInt64) {
        let key = Key(operation: operation, entity: entity)
        // The common case reads the generation only: the rules themselves
        // (several dictionaries) are copied when a rule is resolved.
        let current = control.generation
        if let cached = cache.withLockedValue({ $0.generation == current ? $0.predicates[key] : nil }) { return (cached, current) }
        let (rules, generation) = control.rules
        let rule = rules.rule(operation, for: entity)
        let resolved: QueryPredicate
        if !rule.claims.isSubset(of: identity.claims.keys) {
            // A rule that reads a claim the caller lacks admits nothing
            // (a missing claim is not nil: nil would match rows without one).
            resolved = .constant(false)
        } else if let predicate = rule.predicate {
            resolved = rule.admitsEveryone ? .constant(true) : try resolver.resolve(predicate, entity: entity, variables: rules.variables(for: identity), source: rule.text)
        } else {
            resolved = .constant(false)
        }
        cache.withLockedValue { cache in
            if cache.generation != generation { cache = (generation, [:]) }
            cache.predicates[key] = resolved
        }
        return (resolved, generation)
    }

    /// What a context of this caller may read of each entity.
    var readRestriction: ReadRestriction {
        { [self] entity in try self.predicate(.read, for: entity) }
    }

    /// Refuses a read of an entity whose `read` rule is admin only (a
    /// fetch, count or subscription would only ever see nothing).
    func requireReadable(_ entity: String) throws {
        let rule = rule(.read, for: entity)
        if rule.isAdminOnly {
            throw StrataError(.accessDenied, "reading \(entity) is not allowed: rule \(entity).read is \(rule.quoted)")
        }
    }

    /// The guards of one store's change set: `create` on the objects it
    /// inserts (as inserted), `update` on the objects it changes (as they
    /// were) and `read` on them as changed (nobody moves an object out of
    /// their own sight), `delete` on the objects it deletes (as they
    /// were). An admin-only rule refuses at once.
    func guards(for changes: StoreChanges) throws -> [StoreGuard] {
        var guards: [StoreGuard] = []
        func add(_ operation: AccessRules.Operation, _ phase: StoreGuard.Phase, _ ids: [ObjectID], denial: (String, AccessRules.Rule) -> String) throws {
            var byEntity: [String: [ObjectID]] = [:]
            for id in ids { byEntity[id.entityName, default: []].append(id) }
            for (entity, group) in byEntity.sorted(by: { $0.key < $1.key }) {
                let rule = rule(operation, for: entity)
                if rule.admitsEveryone { continue }
                if rule.isAdminOnly { throw StrataError(.accessDenied, denial(entity, rule)) }
                let admitted = try predicate(operation, for: entity)
                guards.append(StoreGuard(
                    phase: phase,
                    objectIDs: group,
                    violation: ResolvedFetch(entityName: entity, predicate: .not(admitted)),
                    message: denial(entity, rule)
                ))
            }
        }
        try add(.create, .after, changes.inserts.map(\.temporaryID)) { entity, rule in
            "creating \(entity) is not allowed: rule \(entity).create is \(rule.quoted)"
        }
        let updated = changes.updates.map(\.objectID)
        try add(.update, .before, updated) { entity, rule in
            "updating \(entity) is not allowed: rule \(entity).update is \(rule.quoted)"
        }
        // As PostgreSQL's USING without WITH CHECK: the rule holds of the
        // changed object too (nobody hands an object over to another).
        try add(.update, .after, updated) { entity, rule in
            "updating \(entity) so is not allowed: the object would no longer satisfy rule \(entity).update, \(rule.quoted)"
        }
        try add(.read, .after, updated) { entity, rule in
            "updating \(entity) so is not allowed: the object would no longer satisfy rule \(entity).read, \(rule.quoted)"
        }
        try add(.delete, .before, changes.deletes.map(\.objectID)) { entity, rule in
            "deleting \(entity) is not allowed: rule \(entity).delete is \(rule.quoted)"
        }
        return guards
    }

    /// The guard provider of this caller's contexts.
    var saveGuards: SaveGuardProvider {
        { [self] changes in try self.guards(for: changes) }
    }
}
