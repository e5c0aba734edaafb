import Crypto
import Foundation
import StrataContext
import StrataModel
import StrataStore
import StrataWire

extension ServerCore {
    /// The most file bytes one backup frame carries.
    static let backupChunkBytes = 1 << 20

    /// Answers a backup request: the store named copies itself into a
    /// temporary file beside its own (owner-only, as every file the server
    /// creates), whose bytes go out in chunks through `send` (which waits
    /// while the client does not read); the file is removed when the
    /// request ends, however it ends. The last chunk carries the file's
    /// SHA-256.
    func backup(_ request: Strata_V1_BackupRequest, send: (Strata_V1_BackupChunk, _ more: Bool) async throws -> Void) async throws {
        let store = try namedStore(request.store)
        guard let source = store as? any BackupCapableStore else {
            throw WireError(.failedPrecondition, "store \(store.configurationName ?? store.identifier) (\(store.storeDescription.type.rawValue)) cannot be backed up by the server")
        }
        let file = Self.backupFile(beside: store.storeDescription.url)
        defer { Self.removeBackup(file) }
        let made: StoreBackup
        do {
            made = try await source.backup(to: file)
        } catch let error as StrataError {
            // The temporary file's path is nobody's business but the log's.
            throw StrataError(error.code, "backup of store \(store.configurationName ?? store.identifier) failed: \(error.message.replacingOccurrences(of: file.path, with: "the copy"))", details: error.details)
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: file)
        } catch {
            throw StrataError(.storeOpen, "backup of store \(store.configurationName ?? store.identifier): the copy cannot be read back: \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        let chunkBytes = max(1, min(Self.backupChunkBytes, configuration.maxFrameBytes - 512))
        let total = made.byteCount
        var hasher = SHA256()
        var offset = 0
        while true {
            try Task.checkCancellation()
            let data = try handle.read(upToCount: min(chunkBytes, max(0, total - offset))) ?? Data()
            if data.isEmpty, offset < total {
                throw StrataError(.storeOpen, "backup of store \(store.configurationName ?? store.identifier): the copy ended at byte \(offset) of \(total)")
            }
            hasher.update(data: data)
            let end = offset + data.count
            let last = end >= total
            var chunk = Strata_V1_BackupChunk()
            chunk.storeID = made.storeIdentifier
            chunk.format = made.format.rawValue
            chunk.totalBytes = UInt64(total)
            chunk.offset = UInt64(offset)
            chunk.data = data
            if last { chunk.sha256 = Data(hasher.finalize()) }
            try await send(chunk, !last)
            offset = end
            if last { return }
        }
    }

    /// A new name for a backup's temporary file: in the store's folder
    /// when the server may write there (same disk, no copy between file
    /// systems), else in the system's temporary folder.
    static func backupFile(beside storeURL: URL?) -> URL {
        let name = ".strata-backup-\(UUID().uuidString)"
        if let folder = storeURL?.deletingLastPathComponent(), FileManager.default.isWritableFile(atPath: folder.path) {
            return folder.appendingPathComponent(name)
        }
        return FileManager.default.temporaryDirectory.appendingPathComponent(name)
    }

    /// Removes a backup's temporary file and what SQLite may keep beside it.
    static func removeBackup(_ file: URL) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: file.path + suffix)
        }
    }
}
