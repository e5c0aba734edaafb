import StrataAuth
import StrataModel
import StrataQuery
import StrataStore
import StrataSQLite
import StrataWire

/// The compiled statements of the fetches ``FetchHandler`` answers, by what
/// a request says: entity, predicate text (byte for byte), sort, window,
/// result type, and the kind of each variable's value. A request seen
/// before is not parsed, resolved or compiled again: its variables' values
/// are bound to the statement's parameters (``CompiledQuery/rebinding(_:)``).
///
/// A statement is kept only when every use of a variable in the predicate
/// is one of its parameters (``CompiledQuery/bindsEveryVariable(of:)``):
/// where a value shapes the SQL (nil, a list, a string ordering, a
/// variable read through a key path or a function) the statement would be
/// wrong for other values, so such requests are remembered as not kept and
/// compiled every time. A value that does not bind as the kept statement's
/// did (one the store holds as NULL) is compiled afresh too. The model and
/// the stores do not change while a server runs, so nothing kept goes
/// stale. A statement made for a caller bound by access rules holds those
/// rules, with the caller's own values where its rules read them as
/// literals (a list of roles), and is kept for that identity and that
/// generation of the rules only (``Access``: rules replaced make new
/// keys); one whose rules bind a `$AUTH` value as a parameter is never
/// kept (``keeps(_:)``), so no client's variable is ever bound in a rule's
/// place. Bounded: at most twice ``capacity`` requests, each of at most
/// ``PredicateCache/maximumTextBytes`` of predicate text, names and sort
/// keys (larger ones are compiled every time); a kept statement holds none
/// of a request's variables' values, only literals. Each event loop has a
/// cache of its own (``ServerCore/fetchPlans``), so that no kept plan is
/// shared between cores.
final class FetchPlanCache: Sendable {
    /// What a request asks, as far as its statement depends on it.
    struct Key: Hashable, Sendable {
        var entity: String
        var predicate: ExactText
        /// The request's own sort keys: kept as they are, no array made.
        var sort: [Strata_V1_SortKey]
        var limit: UInt32
        var offset: UInt32
        var excludeSubentities: Bool
        var counts: Bool
        /// Each variable's kind of value (``kind(of:)``), by name.
        var variables: [Variable]
        /// Whose rules the statement holds; nil for a caller no rule binds.
        var access: Access?

        /// Every field, the sort keys by their fields: a protobuf message
        /// hashes by visiting its fields, several times the cost. (A field
        /// left out here would only make more keys collide; equality is
        /// the synthesized one.)
        func hash(into hasher: inout Hasher) {
            hasher.combine(entity)
            hasher.combine(predicate)
            hasher.combine(sort.count)
            for key in sort {
                hasher.combine(key.key)
                hasher.combine(key.descending)
                hasher.combine(key.caseInsensitive)
            }
            hasher.combine(limit)
            hasher.combine(offset)
            hasher.combine(excludeSubentities)
            hasher.combine(counts)
            hasher.combine(variables)
            hasher.combine(access)
        }
    }

    /// A variable's name and kind of value: a sorted array of these
    /// hashes for a fraction of what a dictionary costs (which hashes
    /// each entry with a hasher of its own, and must be made first).
    struct Variable: Hashable, Sendable {
        var name: String
        var kind: UInt8
    }

    /// A caller bound by access rules, and the rules' generation: what its
    /// statements' restrictions depend on.
    struct Access: Hashable, Sendable {
        var identity: Identity
        var rulesGeneration: UInt64
    }

    /// How to read what a request asks.
    struct Plan: Sendable {
        /// The one store holding the fetched entity and its subentities.
        let store: SQLiteStore
        /// The fetched entity.
        let entity: String
        /// A ``SQLiteStore/rowQuery(_:)`` or, for counts, a ``SQLiteStore/countQuery(_:)``.
        let query: CompiledQuery
        /// The fetch's limit, if any.
        let limit: Int?
    }

    private enum Entry: Sendable {
        case kept(Plan)
        case notKept
    }

    private let cache: GenerationalCache<Key, Entry>

    /// A cache of at most twice `capacity` requests.
    init(capacity: Int = 512) {
        cache = GenerationalCache(capacity: capacity)
    }

    /// How many requests are remembered.
    var count: Int { cache.count }

    /// The plan for `fetch` with `variables` (its decoded variables), for a
    /// caller bound by the rules `access` names (nil: none binds it): the
    /// kept one with these values bound, or one made now by `make` (and
    /// kept when it can be), which must restrict it by those rules. Nil
    /// when `make` answers nil or throws: the request then goes the usual
    /// way.
    func plan(for fetch: Strata_V1_FetchRequest, variables: [String: VariableValue], access: Access? = nil,
              make: () throws -> (plan: Plan, predicate: Predicate?)?) -> Plan? {
        guard Self.keyBytes(fetch) <= PredicateCache.maximumTextBytes else { return try? make()?.plan }
        let key = Key(
            entity: fetch.entity,
            predicate: ExactText(text: fetch.predicate),
            sort: fetch.sort,
            limit: fetch.limit,
            offset: fetch.offset,
            excludeSubentities: fetch.excludeSubentities,
            counts: fetch.resultType == .count,
            variables: Self.variables(variables),
            access: access
        )
        switch cache.value(for: key) {
        case .kept(let plan)?:
            if let query = plan.query.rebinding(variables) {
                return Plan(store: plan.store, entity: plan.entity, query: query, limit: plan.limit)
            }
            return try? make()?.plan
        case .notKept?:
            // Kept after all when these values bind every variable (the
            // first ones may have been nil, or NaN).
            guard let made = try? make() else { return nil }
            if Self.keeps(made) { cache.insert(Self.kept(made.plan), for: key) }
            return made.plan
        case nil:
            guard let made = try? make() else { return nil }
            cache.insert(Self.keeps(made) ? Self.kept(made.plan) : .notKept, for: key)
            return made.plan
        }
    }

    /// Whether a plan is kept: its parameters are exactly the request's
    /// variables (``CompiledQuery/bindsEveryVariable(of:)``), none of them a
    /// rule's `$AUTH` value. No predicate text can spell those names, so
    /// the first condition already excludes them; the second says so, so
    /// that no change to what text may spell could bind a client's value
    /// in a rule's place.
    private static func keeps(_ made: (plan: Plan, predicate: Predicate?)) -> Bool {
        made.plan.query.bindsEveryVariable(of: made.predicate)
            && !made.plan.query.parameters.contains { $0.use.name.hasPrefix(AccessRules.variablePrefix) }
    }

    /// A plan as kept: without its caller's values.
    private static func kept(_ plan: Plan) -> Entry {
        .kept(Plan(store: plan.store, entity: plan.entity, query: plan.query.withoutParameterValues, limit: plan.limit))
    }

    /// The bytes of a request's key that come from the client (what bounds
    /// a kept entry's size, with the literals of its predicate text).
    private static func keyBytes(_ fetch: Strata_V1_FetchRequest) -> Int {
        fetch.predicate.utf8.count + fetch.entity.utf8.count
            + fetch.sort.reduce(0) { $0 + $1.key.utf8.count + 8 }
            + fetch.variables.keys.reduce(0) { $0 + $1.utf8.count + 8 }
    }

    /// `variables`' names and kinds of value, in the order of their names.
    private static func variables(_ variables: [String: VariableValue]) -> [Variable] {
        var result: [Variable] = []
        result.reserveCapacity(variables.count)
        for (name, value) in variables { result.append(Variable(name: name, kind: kind(of: value))) }
        if result.count > 1 { result.sort { $0.name < $1.name } }
        return result
    }

    /// A variable's kind of value: the resolver types a comparison by the
    /// kinds of its sides, so a statement holds for values of these kinds.
    static func kind(of variable: VariableValue) -> UInt8 {
        switch variable {
        case .list: return 100
        case .object: return 101
        case .value(let value):
            switch value {
            case .null: return 0
            case .integer: return 1
            case .double: return 2
            case .decimal: return 3
            case .string: return 4
            case .boolean: return 5
            case .date: return 6
            case .binary: return 7
            case .uuid: return 8
            case .uri: return 9
            case .object: return 10
            case .objects: return 11
            }
        }
    }
}
