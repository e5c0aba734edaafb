import StrataModel

extension Strata_V1_ObjectState {
    /// The object's values as typed property values.
    public func propertyValues() throws -> [String: PropertyValue] {
        var values: [String: PropertyValue] = [:]
        for (key, value) in self.values {
            values[key] = try PropertyValue(wire: value, field: "\(entity).\(key) of \(id)")
        }
        return values
    }

    /// One value, `.null` when absent.
    public func value(_ key: String) throws -> PropertyValue {
        guard let wire = values[key] else { return .null }
        return try PropertyValue(wire: wire, field: "\(entity).\(key) of \(id)")
    }
}

extension Strata_V1_Value {
    /// A wire value from a typed one.
    public init(_ value: PropertyValue) {
        self = value.wire
    }
}
