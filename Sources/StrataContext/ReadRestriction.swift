import StrataModel
import StrataQuery

/// The predicate that selects the objects of an entity a context may read
/// (a resolved access rule, AND-ed into its reads); `.constant(true)`
/// for all of them, `.constant(false)` for none.
public typealias ReadRestriction = @Sendable (_ entity: String) throws -> QueryPredicate

extension ResolvedFetch {
    /// Refuses a fetch whose predicate or sort keys read related objects
    /// of an entity `restriction` does not let the caller read whole: such
    /// a fetch would judge objects the caller may not see.
    public func checkTraversals(allowedBy restriction: ReadRestriction) throws {
        for entity in traversedEntities.sorted() where try restriction(entity) != .constant(true) {
            throw StrataError(.accessDenied, "a fetch of \(entityName) that reads related \(entity) objects is not allowed: rule \(entity).read limits which of them may be read, and a predicate or sort key through a relationship would judge them all")
        }
    }
}
