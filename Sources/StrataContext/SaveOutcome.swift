import StrataModel

/// What ``Coordinator/save(_:)`` committed.
public struct SaveOutcome: Sendable {
    /// How a save was written.
    public enum Route: Sendable, Hashable {
        /// New objects only, written straight to their store without a
        /// context (the change set's origin is ``Coordinator/directInsertOrigin``).
        case direct
        /// Through a fresh context (which streams large inserts).
        case context
    }

    /// The inserted objects' permanent IDs, in the order of the request's
    /// inserts.
    public var insertedIDs: [ObjectID]
    /// The change set committed, as published to the coordinator's change
    /// hub: versions, updated properties, deletions.
    public var changes: ChangeSet
    /// The route the save took.
    public var route: Route

    /// Creates an outcome.
    public init(insertedIDs: [ObjectID], changes: ChangeSet, route: Route) {
        self.insertedIDs = insertedIDs
        self.changes = changes
        self.route = route
    }
}
