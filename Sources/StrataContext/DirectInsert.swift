import StrataModel

/// One new object for ``Coordinator/insertDirectly(_:author:contextName:checksVersions:)``:
/// its entity, the store to put it in (needed only when the entity is in
/// several stores) and the values set on it, by property name.
public struct DirectInsert: Sendable {
    /// The entity.
    public var entity: String
    /// The store's identifier, or nil for the entity's only store.
    public var storeIdentifier: String?
    /// The values set, as `setValue(_:forKey:)` would set them.
    public var values: [String: PropertyValue]

    /// Creates an insert.
    public init(entity: String, storeIdentifier: String? = nil, values: [String: PropertyValue]) {
        self.entity = entity
        self.storeIdentifier = storeIdentifier
        self.values = values
    }
}

/// What a direct insert committed.
public struct DirectInsertResult: Sendable {
    /// The new objects' permanent IDs, in the order of the inserts.
    public var insertedIDs: [ObjectID]
    /// The change set published to the coordinator's change hub.
    public var changes: ChangeSet
}
