import StrataQuery
import StrataStore

/// Makes the guards (``StoreGuard``) of one store's change set: what the
/// objects it inserts, updates and deletes must satisfy. A provider may
/// also refuse the change set outright by throwing.
public typealias SaveGuardProvider = @Sendable (_ changes: StoreChanges) throws -> [StoreGuard]
