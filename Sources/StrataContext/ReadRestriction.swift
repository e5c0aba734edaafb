import StrataQuery

/// The predicate that selects the objects of an entity a context may read
/// (a resolved access rule, AND-ed into its reads); `.constant(true)`
/// for all of them, `.constant(false)` for none.
public typealias ReadRestriction = @Sendable (_ entity: String) throws -> QueryPredicate

