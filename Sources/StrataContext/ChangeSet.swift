import StrataModel

/// What one committed save changed: the IDs inserted, updated (with the
/// keys that changed) and deleted, and the new versions. Contexts merge
/// change sets saved elsewhere; the server turns them into notifications.
public struct ChangeSet: Sendable, Hashable {
    /// Objects inserted, by permanent ID.
    public var inserted: [ObjectID]
    /// Objects updated, with the persisted keys that changed.
    public var updated: [ObjectID: Set<String>]
    /// Objects deleted.
    public var deleted: [ObjectID]
    /// The new version of every updated object, and of inserted objects
    /// when it is not 1. An inserted object absent here is at version 1
    /// (a store's first version; a save of 100,000 inserts does not build a
    /// dictionary to say so): ask ``version(of:)``.
    public var versions: [ObjectID: Int64]
    /// The name of the context that saved, if it has one.
    public var contextName: String?
    /// Identifies the saving context, so it can skip its own change sets.
    public var origin: String
    /// The stored values of updated and deleted objects before the save,
    /// where the saving context had them (a save made in this process),
    /// so that a subscriber's access rules can tell who could see them.
    public var previousValues: [ObjectID: PropertyValues] = [:]

    /// Creates a change set.
    public init(
        inserted: [ObjectID] = [],
        updated: [ObjectID: Set<String>] = [:],
        deleted: [ObjectID] = [],
        versions: [ObjectID: Int64] = [:],
        contextName: String? = nil,
        origin: String = ""
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.versions = versions
        self.contextName = contextName
        self.origin = origin
    }

    /// The version an inserted or updated object is at after this change
    /// set; nil for objects it did not insert or update. Looking up an
    /// inserted object absent from ``versions`` scans ``inserted``: code
    /// that walks ``inserted`` reads `versions[id] ?? 1` instead.
    public func version(of id: ObjectID) -> Int64? {
        if let version = versions[id] { return version }
        return inserted.contains(id) ? 1 : nil
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// Every entity with a change.
    public var entityNames: Set<String> {
        Set(inserted.map(\.entityName) + updated.keys.map(\.entityName) + deleted.map(\.entityName))
    }
}

