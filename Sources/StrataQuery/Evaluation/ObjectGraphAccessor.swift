import StrataModel

/// How the in-memory evaluator reads an object graph: a store's row
/// snapshots, a context's managed objects, or a test fixture.
///
/// The evaluator is generic over the accessor, so calls are direct (no
/// existential boxing per access). Properties are first turned into keys
/// once, when a predicate is compiled (``attributeKey(_:entity:)``,
/// ``relationshipKey(_:entity:)``): an accessor with slot-indexed storage
/// can resolve names there and make every per-object access an array
/// index. The default keys are the descriptions themselves.
///
/// `entity` in the key functions is the entity the property is read from
/// (the static type of the path at that point); the objects passed later
/// are instances of it or of its subentities, and a key must work for all.
public protocol ObjectGraphAccessor {
    /// An object of the graph (a reference, an index, a snapshot…).
    associatedtype Object
    /// A resolved attribute.
    associatedtype AttributeKey = AttributeDescription
    /// A resolved relationship.
    associatedtype RelationshipKey = RelationshipDescription

    /// Resolves an attribute of `entity` (or an ancestor) once, at compile time.
    func attributeKey(_ attribute: AttributeDescription, entity: String) throws(StrataError) -> AttributeKey
    /// Resolves a relationship of `entity` (or an ancestor) once, at compile time.
    func relationshipKey(_ relationship: RelationshipDescription, entity: String) throws(StrataError) -> RelationshipKey

    /// The attribute's value (`.null` for nil).
    func value(_ attribute: AttributeKey, of object: Object) -> PropertyValue
    /// The destination of a to-one relationship, or nil.
    func destination(_ relationship: RelationshipKey, of object: Object) -> Object?
    /// The destinations of a to-many relationship (in order for ordered ones).
    func destinations(_ relationship: RelationshipKey, of object: Object) -> [Object]
    /// How many destinations a to-many relationship has (defaults to
    /// `destinations(…).count`; override when cheaper).
    func destinationCount(_ relationship: RelationshipKey, of object: Object) -> Int

    /// The object's ID.
    func objectID(of object: Object) -> ObjectID
    /// The object's entity name (defaults to `objectID(of:).entityName`).
    func entityName(of object: Object) -> String
    /// The object's primary key when saved (defaults to `objectID(of:).primaryKey`);
    /// the final tie-breaker of sorts.
    func primaryKey(of object: Object) -> Int64?
}

extension ObjectGraphAccessor {
    /// Counts `destinations(…)`.
    public func destinationCount(_ relationship: RelationshipKey, of object: Object) -> Int {
        destinations(relationship, of: object).count
    }

    /// `objectID(of:).entityName`.
    public func entityName(of object: Object) -> String {
        objectID(of: object).entityName
    }

    /// `objectID(of:).primaryKey`.
    public func primaryKey(of object: Object) -> Int64? {
        objectID(of: object).primaryKey
    }
}

extension ObjectGraphAccessor where AttributeKey == AttributeDescription {
    /// The description itself.
    public func attributeKey(_ attribute: AttributeDescription, entity: String) throws(StrataError) -> AttributeDescription {
        attribute
    }
}

extension ObjectGraphAccessor where RelationshipKey == RelationshipDescription {
    /// The description itself.
    public func relationshipKey(_ relationship: RelationshipDescription, entity: String) throws(StrataError) -> RelationshipDescription {
        relationship
    }
}
