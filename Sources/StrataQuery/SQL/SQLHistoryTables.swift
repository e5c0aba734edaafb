/// The names of the persistent-history tables every SQL store keeps, in
/// the reserved `Z_STRATA_` namespace (no entity's table can collide).
package enum SQLHistoryTables {
    /// One row per committed save (its token, time, author, context, process, origin).
    package static let transactions = "Z_STRATA_HISTORY"
    /// One row per changed object of a save.
    package static let changes = "Z_STRATA_HISTORY_CHANGE"
    /// The preserved attribute values of deleted objects.
    package static let tombstones = "Z_STRATA_HISTORY_TOMBSTONE"
    /// Each consumer's last merged token.
    package static let consumers = "Z_STRATA_HISTORY_CONSUMER"
}
