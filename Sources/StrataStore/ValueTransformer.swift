import Foundation

/// Turns the values of a `Transformable` attribute into `Data` and back.
///
/// Register transformers by the name an attribute's `valueTransformerName`
/// gives in a ``ValueTransformerRegistry``; a store refuses to open when the
/// model names a transformer the registry does not have.
public protocol ValueTransformer: Sendable {
    /// The name attributes refer to.
    var name: String { get }
    /// Encodes a value; throws for a value of the wrong kind.
    func transformedValue(_ value: any Sendable) throws -> Data
    /// Decodes data written by ``transformedValue(_:)``.
    func reverseTransformedValue(_ data: Data) throws -> any Sendable
}

/// The transformers known to a container, by name.
public struct ValueTransformerRegistry: Sendable {
    private var transformers: [String: any ValueTransformer]

    /// A registry holding these transformers (plus the built-in ones).
    public init(_ transformers: [any ValueTransformer] = []) {
        self.transformers = [:]
        for transformer in [NSSecureUnarchiveFromDataTransformerStandIn()] + transformers {
            self.transformers[transformer.name] = transformer
        }
    }

    /// Adds or replaces a transformer.
    public mutating func register(_ transformer: any ValueTransformer) {
        transformers[transformer.name] = transformer
    }

    /// The transformer with this name.
    public func transformer(named name: String) -> (any ValueTransformer)? {
        transformers[name]
    }

    /// The registered names.
    public var names: [String] { transformers.keys.sorted() }
}

/// Core Data's default transformer name for Transformable attributes that
/// name none: here the value must already be `Data`, stored as it is.
struct NSSecureUnarchiveFromDataTransformerStandIn: ValueTransformer {
    var name: String { "NSSecureUnarchiveFromData" }

    func transformedValue(_ value: any Sendable) throws -> Data {
        guard let data = value as? Data else {
            throw TransformError.notData(String(describing: type(of: value)))
        }
        return data
    }

    func reverseTransformedValue(_ data: Data) throws -> any Sendable { data }

    enum TransformError: Error, CustomStringConvertible {
        case notData(String)
        var description: String { "the default transformer stores Data only, got \(notDataType)" }
        private var notDataType: String {
            switch self { case .notData(let t): t }
        }
    }
}
