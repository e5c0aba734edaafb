import StrataContext
import StrataModel
import StrataQuery

/// What a subscriber bound by access rules may be told of a committed
/// save: objects it may read after the save (inserted, updated), objects
/// that left its sight (announced as deleted), and deletions of objects it
/// could read before. "Before" is judged on the values the saving context
/// had (``ChangeSet/previousValues``) with the subscriber's `read` rule; a
/// rule that follows relationships, or a save made by another process,
/// gives no verdict on those values, and the object is then not announced.
struct SubscriptionVisibility {
    let policy: AccessPolicy
    let model: ObjectModel

    /// Whether the subscriber could read `id` before the save.
    func couldReadBefore(_ id: ObjectID, in changes: ChangeSet) -> Bool {
        guard let values = changes.previousValues[id],
              let rule = try? policy.predicate(.read, for: id.entityName) else { return false }
        switch rule {
        case .constant(let admitted):
            return admitted
        default:
            guard let evaluator = try? PredicateEvaluator(rule, entity: id.entityName, model: model, accessor: InsertValuesAccessor()) else { return false }
            return (try? evaluator.evaluate(InsertValuesAccessor.Row(id: id, values: values))) ?? false
        }
    }
}
