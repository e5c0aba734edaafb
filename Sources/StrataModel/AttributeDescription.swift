import Foundation

/// An attribute of an entity: a named, typed value.
public struct AttributeDescription: Sendable, Hashable {
    /// The attribute's name, unique within its entity and its ancestors.
    public var name: String
    /// The attribute's type.
    public var type: AttributeType
    /// Whether `nil` is allowed. Xcode writes `optional="YES"`; absent means mandatory.
    public var isOptional: Bool
    /// Whether the value lives only in memory and is never written to a store.
    public var isTransient: Bool
    /// Whether the value is computed from ``derivationExpression`` when the context saves.
    public var isDerived: Bool
    /// The derivation expression (`canonical:(title)`, `items.@count`, `now()`, …).
    public var derivationExpression: String?
    /// The default value given to newly inserted objects, typed; `.null` when none.
    public var defaultValue: PropertyValue
    /// The lower bound: a number or date for those types, a length for strings; `.null` when none.
    public var minValue: PropertyValue
    /// The upper bound: a number or date for those types, a length for strings; `.null` when none.
    public var maxValue: PropertyValue
    /// A regular expression string values must match in full, if any.
    public var regularExpression: String?
    /// The name of the value transformer of a `Transformable` attribute.
    public var valueTransformerName: String?
    /// The class name Xcode records for `Transformable` attributes.
    public var customClassName: String?
    /// Whether large binary values may be stored outside the row.
    public var allowsExternalBinaryDataStorage: Bool
    /// Whether persistent history keeps the value in deletion tombstones.
    public var preserveAfterDeletion: Bool
    /// Whether the attribute is indexed on its own (legacy `indexed="YES"`).
    public var isIndexed: Bool
    /// Xcode's version hash modifier, mixed into the entity's version hash.
    public var versionHashModifier: String?
    /// The renaming identifier (`elementID`), for migrations.
    public var renamingIdentifier: String?
    /// Free-form user info.
    public var userInfo: [String: String]

    /// Creates an attribute. Only `name` and `type` are required; the rest
    /// defaults to a mandatory, persisted attribute with no default or bounds.
    public init(
        name: String,
        type: AttributeType,
        isOptional: Bool = false,
        isTransient: Bool = false,
        isDerived: Bool = false,
        derivationExpression: String? = nil,
        defaultValue: PropertyValue = .null,
        minValue: PropertyValue = .null,
        maxValue: PropertyValue = .null,
        regularExpression: String? = nil,
        valueTransformerName: String? = nil,
        customClassName: String? = nil,
        allowsExternalBinaryDataStorage: Bool = false,
        preserveAfterDeletion: Bool = false,
        isIndexed: Bool = false,
        versionHashModifier: String? = nil,
        renamingIdentifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.isDerived = isDerived
        self.derivationExpression = derivationExpression
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        self.regularExpression = regularExpression
        self.valueTransformerName = valueTransformerName
        self.customClassName = customClassName
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.preserveAfterDeletion = preserveAfterDeletion
        self.isIndexed = isIndexed
        self.versionHashModifier = versionHashModifier
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
    }

    /// Whether the attribute is written to stores (not transient).
    public var isPersisted: Bool { !isTransient }
}
