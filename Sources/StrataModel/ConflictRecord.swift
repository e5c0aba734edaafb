/// One optimistic-locking conflict, as a save that fails with 133020
/// reports it: the object, the versions, and both states.
public struct ConflictRecord: Sendable, Hashable, CustomStringConvertible {
    /// The object.
    public var objectID: ObjectID
    /// The version the context's changes were based on.
    public var expectedVersion: Int64
    /// The version in the store now; 0 when the object was deleted meanwhile.
    public var currentVersion: Int64
    /// The persisted values the context had read (its snapshot at fetch).
    public var cachedValues: [String: PropertyValue]
    /// The store's current values; nil when the object was deleted.
    public var persistedValues: [String: PropertyValue]?
    /// The context's unsaved changes to the object.
    public var localChanges: [String: PropertyValue]

    /// Creates a record.
    public init(
        objectID: ObjectID,
        expectedVersion: Int64,
        currentVersion: Int64,
        cachedValues: [String: PropertyValue],
        persistedValues: [String: PropertyValue]?,
        localChanges: [String: PropertyValue]
    ) {
        self.objectID = objectID
        self.expectedVersion = expectedVersion
        self.currentVersion = currentVersion
        self.cachedValues = cachedValues
        self.persistedValues = persistedValues
        self.localChanges = localChanges
    }

    /// `<id>: version 2 → 3, store changed [title], context changed [price]`.
    public var description: String {
        guard let persisted = persistedValues else {
            return "\(objectID): version \(expectedVersion) → deleted in the store; context changed \(localChanges.keys.sorted())"
        }
        let storeChanged = Set(persisted.keys).union(cachedValues.keys).filter { persisted[$0] != cachedValues[$0] }.sorted()
        return "\(objectID): version \(expectedVersion) → \(currentVersion), store changed \(storeChanged), context changed \(localChanges.keys.sorted())"
    }
}
