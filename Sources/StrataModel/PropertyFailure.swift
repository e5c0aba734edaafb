/// One property of one object failing validation: part of a 1560 error
/// (or the only failure of a 1570–1680 error), for callers that need more
/// than the message, such as the wire protocol's per-property details.
public struct PropertyFailure: Sendable, Hashable, CustomStringConvertible {
    /// The object at fault (a temporary ID for an unsaved insert).
    public var objectID: ObjectID
    /// Its entity.
    public var entityName: String
    /// The attribute or relationship at fault.
    public var property: String
    /// The specific validation code (1570, 1580, …, 1680).
    public var code: StrataError.Code
    /// What is wrong, naming the entity, property and object.
    public var message: String

    /// Creates a failure.
    public init(objectID: ObjectID, entityName: String, property: String, code: StrataError.Code, message: String) {
        self.objectID = objectID
        self.entityName = entityName
        self.property = property
        self.code = code
        self.message = message
    }

    /// `1570: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}
