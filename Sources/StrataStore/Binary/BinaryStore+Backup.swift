import Foundation
import StrataModel

extension BinaryStore: BackupCapableStore {
    /// Writes the store as it stands between two saves (the actor runs
    /// one thing at a time) to `url`, atomically: a binary store file like
    /// the store's own.
    public func backup(to url: URL) async throws -> StoreBackup {
        try checkOpen()
        try BinaryStore.writeBackup(storage, schema: schema, model: model, to: url)
        return StoreBackup(storeIdentifier: identifier, format: .binary, byteCount: StoreBackup.size(of: url))
    }

    /// Writes `storage` as a new binary store file at `url` (never over an
    /// existing file).
    static func writeBackup(_ storage: MemoryStorage, schema: StoredSchema, model: ObjectModel, to url: URL) throws(StrataError) {
        let path = url.path
        guard !FileManager.default.fileExists(atPath: path) else {
            throw StrataError(.storeOpen, "backup: \(path) already exists")
        }
        try write(storage, schema: schema, model: model, to: path, displayName: "backup \(path)", fault: nil, code: .storeOpen)
    }
}
