extension AttributeDescription {
    /// A persisted (or transient) attribute, for models written in Swift:
    ///
    /// ```swift
    /// EntityDescription(name: "Book", attributes: [
    ///     .attribute("title", .string),
    ///     .attribute("subtitle", .string, optional: true),
    ///     .attribute("rating", .integer16, default: .integer(3)),
    /// ])
    /// ```
    public static func attribute(
        _ name: String,
        _ type: AttributeType,
        optional: Bool = false,
        transient: Bool = false,
        default defaultValue: PropertyValue = .null
    ) -> AttributeDescription {
        AttributeDescription(name: name, type: type, isOptional: optional, isTransient: transient, defaultValue: defaultValue)
    }

    /// A derived attribute, recomputed from `expression` when the context saves:
    /// `.derived("titleKey", .string, "canonical:(title)")`.
    public static func derived(
        _ name: String,
        _ type: AttributeType,
        _ expression: String,
        optional: Bool = true
    ) -> AttributeDescription {
        AttributeDescription(name: name, type: type, isOptional: optional, isDerived: true, derivationExpression: expression)
    }
}
