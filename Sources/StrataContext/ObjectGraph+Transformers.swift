import StrataModel
import StrataStore

extension ObjectGraph {
    /// The transformer of a Transformable attribute.
    func transformer(forKey key: String, of object: ManagedObject) throws -> any ValueTransformer {
        guard let attribute = model.attribute(named: key, in: object.entityName), attribute.type == .transformable else {
            throw StrataError(.invalidValue, "'\(object.entityName).\(key)' is not a Transformable attribute")
        }
        let name = attribute.valueTransformerName ?? "NSSecureUnarchiveFromData"
        guard let transformer = transformers.transformer(named: name) else {
            throw StrataError(.invalidValue, "'\(object.entityName).\(key)' uses value transformer '\(name)', which is not registered")
        }
        return transformer
    }
}
