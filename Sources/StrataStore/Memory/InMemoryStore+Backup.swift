import Foundation
import StrataModel

extension InMemoryStore: BackupCapableStore {
    /// Writes the store as it stands between two saves as a binary store
    /// file: a copy that outlives the process, which a server opens as a
    /// `binary` store (or an embedded program loads into memory).
    public func backup(to url: URL) async throws -> StoreBackup {
        try checkOpen()
        let schema = StoredSchema(model: model, entityNames: entityNames)
        try BinaryStore.writeBackup(storage, schema: schema, model: model, to: url)
        return StoreBackup(storeIdentifier: identifier, format: .binary, byteCount: StoreBackup.size(of: url))
    }
}
