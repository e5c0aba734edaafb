import Foundation
import StrataModel

extension ManagedObject {
    /// Sets a Transformable attribute from any value its transformer accepts
    /// (stored as the `Data` the transformer makes).
    public func setTransformable(_ value: (any Sendable)?, forKey key: String) throws {
        guard let value else {
            try setValue(.null, forKey: key)
            return
        }
        let transformer = try graph.transformer(forKey: key, of: self)
        try setValue(.binary(transformer.transformedValue(value)), forKey: key)
    }

    /// The value of a Transformable attribute, turned back by its transformer.
    public func transformable(forKey key: String) throws -> (any Sendable)? {
        guard case .binary(let data) = try value(forKey: key) else { return nil }
        return try graph.transformer(forKey: key, of: self).reverseTransformedValue(data)
    }
}
