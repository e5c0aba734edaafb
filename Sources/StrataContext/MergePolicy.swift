/// How a save resolves optimistic-locking conflicts (objects changed in the
/// store since the context read them) and uniqueness conflicts.
public enum MergePolicy: String, Sendable, Hashable, CaseIterable {
    /// Fail the save with 133020 (or 133021), carrying every conflict. The default.
    case error
    /// Property by property: where the store changed a property, the store's
    /// value wins; the context's other changes are kept.
    case mergeByPropertyStoreTrump
    /// Property by property: the context's changed values win; the store's
    /// other changes are kept. Uniqueness conflicts become updates of the
    /// existing object (upsert).
    case mergeByPropertyObjectTrump
    /// The context's whole state replaces the store's.
    case overwrite
    /// The store's state wins: the context's changes to conflicting objects are dropped.
    case rollback
}
