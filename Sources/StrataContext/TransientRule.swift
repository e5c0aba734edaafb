import StrataModel

/// A transient attribute computed in code from other values of the same
/// object, on first read after any of its dependencies changed (the way
/// Core Data apps write custom accessors for transients).
public struct TransientRule: Sendable {
    /// The keys the value is computed from; setting one clears the cached value.
    public var dependencies: [String]
    /// Computes the value from the dependencies' current values.
    public var compute: @Sendable ([String: PropertyValue]) -> PropertyValue

    /// Creates a rule.
    public init(dependencies: [String], compute: @escaping @Sendable ([String: PropertyValue]) -> PropertyValue) {
        self.dependencies = dependencies
        self.compute = compute
    }
}
