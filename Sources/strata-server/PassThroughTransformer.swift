import Foundation
import StrataStore

/// Stands in for a value transformer the server has no code for: clients
/// send and receive a Transformable attribute as the `Data` their own
/// transformer made, so the server stores those bytes as they are.
struct PassThroughTransformer: ValueTransformer {
    let name: String

    func transformedValue(_ value: any Sendable) throws -> Data {
        guard let data = value as? Data else {
            throw CocoaError(.coderInvalidValue, userInfo: [NSDebugDescriptionErrorKey: "transformer '\(name)' passes Data through and was given \(type(of: value))"])
        }
        return data
    }

    func reverseTransformedValue(_ data: Data) throws -> any Sendable {
        data
    }
}
