import StrataModel

/// One save described by value: new objects, changes to saved ones and
/// deletions, all or nothing, as a client sends it. ``Coordinator/save(_:)``
/// saves it by the cheapest route that keeps a context's answers.
///
/// Values are ``PropertyValue``s as `setValue(_:forKey:)` takes them; a
/// to-one relationship holds `.object(id)`, a to-many `.objects(ids)`
/// (the whole list) or `.null` (none). An ID may name an object this
/// request inserts, by its ``Insert/id``.
public struct SaveRequest: Sendable {
    /// A new object.
    public struct Insert: Sendable {
        /// The object's temporary ID (``ObjectID/temporary(entityName:)``,
        /// of ``entity``), unique in the request: other values of the
        /// request name the object by it.
        public var id: ObjectID
        /// The store to put it in: needed only when the entity is in
        /// several stores.
        public var storeIdentifier: String?
        /// The values set, by property name.
        public var values: [String: PropertyValue]

        /// The entity.
        public var entity: String { id.entityName }

        /// Creates an insert.
        public init(id: ObjectID, storeIdentifier: String? = nil, values: [String: PropertyValue]) {
            self.id = id
            self.storeIdentifier = storeIdentifier
            self.values = values
        }
    }

    /// A change to a saved object.
    public struct Update: Sendable {
        /// The object.
        public var id: ObjectID
        /// The version the client's values are based on (0: the current
        /// one), and the values it read at that version: the object is
        /// rebased on them (``Context/rebase(_:onVersion:values:)``), so a
        /// save made since is a conflict for the merge policy.
        public var baseVersion: Int64
        /// The values read at ``baseVersion``.
        public var baseValues: [String: PropertyValue]
        /// The values set, by property name.
        public var values: [String: PropertyValue]

        /// Creates an update.
        public init(id: ObjectID, baseVersion: Int64 = 0, baseValues: [String: PropertyValue] = [:], values: [String: PropertyValue]) {
            self.id = id
            self.baseVersion = baseVersion
            self.baseValues = baseValues
            self.values = values
        }
    }

    /// A deletion.
    public struct Delete: Sendable {
        /// The object.
        public var id: ObjectID
        /// The version the deletion is based on (0: the current one).
        public var baseVersion: Int64

        /// Creates a deletion.
        public init(id: ObjectID, baseVersion: Int64 = 0) {
            self.id = id
            self.baseVersion = baseVersion
        }
    }

    /// The new objects, in order.
    public var inserts: [Insert]
    /// The changes to saved objects, in order.
    public var updates: [Update]
    /// The deletions, in order.
    public var deletes: [Delete]
    /// How conflicts are resolved.
    public var mergePolicy: MergePolicy
    /// Who saves, recorded in history (``Context/transactionAuthor``) and
    /// used as the change set's context name.
    public var author: String?
    /// The conditions the save must meet (a server's access rules for
    /// the caller; see ``Context/saveGuards``). A guarded save always goes
    /// through a context.
    public var saveGuards: SaveGuardProvider?
    /// What the save may read (see ``Context/readRestriction``).
    public var readRestriction: ReadRestriction?

    /// Creates a request.
    public init(inserts: [Insert] = [], updates: [Update] = [], deletes: [Delete] = [], mergePolicy: MergePolicy = .error, author: String? = nil,
                saveGuards: SaveGuardProvider? = nil, readRestriction: ReadRestriction? = nil) {
        self.inserts = inserts
        self.updates = updates
        self.deletes = deletes
        self.mergePolicy = mergePolicy
        self.author = author
        self.saveGuards = saveGuards
        self.readRestriction = readRestriction
    }
}
