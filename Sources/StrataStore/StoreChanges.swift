import StrataModel

/// One store's part of a save: inserts, updates and deletes, written in one
/// transaction, all or nothing.
///
/// Values may refer to objects inserted in the same save by their temporary
/// IDs; the store replaces them with the permanent IDs it assigns.
public struct StoreChanges: Sendable, Hashable {
    /// A new object.
    public struct Insert: Sendable, Hashable {
        /// The temporary ID the context gave it.
        public var temporaryID: ObjectID
        /// Persisted attribute and to-one values by name (absent = nil).
        public var values: PropertyValues
        /// Destinations of to-many relationships by name (absent = empty).
        public var toMany: [String: [ObjectID]]

        /// Creates an insert.
        public init(temporaryID: ObjectID, values: PropertyValues, toMany: [String: [ObjectID]] = [:]) {
            self.temporaryID = temporaryID
            self.values = values
            self.toMany = toMany
        }

        /// Creates an insert of a dictionary's values.
        public init(temporaryID: ObjectID, values: [String: PropertyValue], toMany: [String: [ObjectID]] = [:]) {
            self.init(temporaryID: temporaryID, values: PropertyValues(values), toMany: toMany)
        }
    }

    /// Changes to a saved object.
    public struct Update: Sendable, Hashable {
        /// The object.
        public var objectID: ObjectID
        /// The version the changes are based on; a different current version
        /// is a conflict (unless the save does not check versions).
        public var expectedVersion: Int64
        /// Changed attribute and to-one values by name.
        public var values: PropertyValues
        /// Changed to-many relationships: the complete new destination list.
        public var toMany: [String: [ObjectID]]

        /// Creates an update.
        public init(objectID: ObjectID, expectedVersion: Int64, values: PropertyValues, toMany: [String: [ObjectID]] = [:]) {
            self.objectID = objectID
            self.expectedVersion = expectedVersion
            self.values = values
            self.toMany = toMany
        }

        /// Creates an update of a dictionary's values.
        public init(objectID: ObjectID, expectedVersion: Int64, values: [String: PropertyValue], toMany: [String: [ObjectID]] = [:]) {
            self.init(objectID: objectID, expectedVersion: expectedVersion, values: PropertyValues(values), toMany: toMany)
        }
    }

    /// A deleted object.
    public struct Delete: Sendable, Hashable {
        /// The object.
        public var objectID: ObjectID
        /// The version the delete is based on.
        public var expectedVersion: Int64

        /// Creates a delete.
        public init(objectID: ObjectID, expectedVersion: Int64) {
            self.objectID = objectID
            self.expectedVersion = expectedVersion
        }
    }

    /// New objects.
    public var inserts: [Insert]
    /// Changed objects.
    public var updates: [Update]
    /// Deleted objects.
    public var deletes: [Delete]
    /// When false (the overwrite merge policy) versions are not compared.
    public var checksVersions: Bool
    /// Who saved (Core Data's transaction author), recorded in persistent history.
    public var author: String?
    /// The saving context's name, recorded in persistent history.
    public var contextName: String?
    /// Conditions the store checks inside the save's transaction (access
    /// rules); a violated one fails the save, nothing written.
    public var guards: [StoreGuard] = []

    /// Creates a change set.
    public init(inserts: [Insert] = [], updates: [Update] = [], deletes: [Delete] = [], checksVersions: Bool = true, author: String? = nil, contextName: String? = nil) {
        self.inserts = inserts
        self.updates = updates
        self.deletes = deletes
        self.checksVersions = checksVersions
        self.author = author
        self.contextName = contextName
    }

    /// Whether there is nothing to write.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }
}
