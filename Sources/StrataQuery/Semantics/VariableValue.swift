import StrataModel

/// The value bound to a `$VARIABLE` when a predicate is resolved.
public enum VariableValue: Sendable, Hashable {
    /// A single value (`$UUID`, `$NAME`), or `.objects` for `IN $list` of objects.
    case value(PropertyValue)
    /// A list of values (`IN $list`, `BETWEEN $range`).
    case list([PropertyValue])
    /// An object (`$FETCH_SOURCE`): its ID and the values of its key paths,
    /// keyed by key path (`"uuid"`, `"author.name"`), so `$VAR.keyPath`
    /// resolves without reaching back into a store.
    case object(ObjectID, values: [String: PropertyValue])
}
