import StrataContext
import StrataModel
import StrataStore
import StrataWire

extension ServerCore {
    /// The store a request names (History, Backup): by identifier, by
    /// configuration, by an entity it holds, or the server's only one when
    /// `name` is empty. Unknown: NOT_FOUND with 140104, listing the stores.
    func namedStore(_ name: String) throws -> any PersistentStore {
        let stores = coordinator.stores
        func names() -> String { stores.map { $0.configurationName ?? $0.identifier }.joined(separator: ", ") }
        if name.isEmpty {
            guard stores.count == 1, let only = stores.first else {
                throw WireError(.invalidArgument, "the server has \(stores.count) stores (\(names())): name one by configuration, entity or identifier")
            }
            return only
        }
        if let store = coordinator.store(identifier: name) ?? stores.first(where: { $0.configurationName == name }) {
            return store
        }
        let holding = coordinator.stores(for: name)
        if holding.count == 1, let store = holding.first { return store }
        if holding.count > 1 {
            throw WireError(.invalidArgument, "entity '\(name)' is in \(holding.count) stores (\(holding.map { $0.configurationName ?? $0.identifier }.joined(separator: ", "))): name one by configuration or identifier")
        }
        throw WireError(.notFound, "no store named '\(name)' (stores: \(names()))", strataCode: StrataError.Code.invalidValue.rawValue)
    }
}
