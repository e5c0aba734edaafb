import Crypto
import Foundation
import StrataWire

extension StrataClient {
    /// Asks the server for a consistent copy of one store (by identifier,
    /// configuration, or an entity it holds; empty for the server's only
    /// store) and writes it to `file`: first to `FILE.partial` (readable by
    /// its owner only), checked against the server's length and SHA-256,
    /// synced, then renamed over `file`. Whatever fails leaves `file` as it
    /// was and no partial file behind; `file` may not be a folder. Admin only while access rules are
    /// in force (140201).
    public nonisolated func backup(store: String = "", to file: URL) async throws -> BackupResult {
        let partial = URL(fileURLWithPath: file.path + ".partial")
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: file.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw StrataClientError(.failedPrecondition, "\(file.path) is a folder: name the backup file to write")
        }
        try? manager.removeItem(at: partial)
        guard manager.createFile(atPath: partial.path, contents: nil, attributes: [.posixPermissions: 0o600]),
              let handle = FileHandle(forWritingAtPath: partial.path) else {
            throw StrataClientError(.failedPrecondition, "cannot create \(partial.path)")
        }
        var finished = false
        defer {
            try? handle.close()
            if !finished { try? manager.removeItem(at: partial) }
        }
        var hasher = SHA256()
        var received: UInt64 = 0
        var last: Strata_V1_BackupChunk?
        for try await frame in try await send(.backup(Strata_V1_BackupRequest.with { $0.store = store })) {
            guard case .backup(let chunk)? = frame.response else { throw unexpected(frame, "backup") }
            guard chunk.offset == received else {
                throw StrataClientError(.dataLoss, "backup: a chunk starts at byte \(chunk.offset), expected \(received)")
            }
            try handle.write(contentsOf: chunk.data)
            hasher.update(data: chunk.data)
            received += UInt64(chunk.data.count)
            last = chunk
        }
        // Cancellation ends the stream quietly: not a complete copy.
        try Task.checkCancellation()
        guard let last else { throw StrataClientError(.dataLoss, "backup: the server sent no chunk") }
        guard received == last.totalBytes else {
            throw StrataClientError(.dataLoss, "backup: received \(received) bytes of \(last.totalBytes)")
        }
        guard Data(hasher.finalize()) == last.sha256 else {
            throw StrataClientError(.dataLoss, "backup: the copy's SHA-256 differs from the server's")
        }
        try handle.synchronize()
        try handle.close()
        // rename(2) replaces an existing file atomically: FILE is the old
        // backup or the new one, never neither.
        guard rename(partial.path, file.path) == 0 else {
            throw StrataClientError(.failedPrecondition, "cannot rename \(partial.path) to \(file.path): \(String(cString: strerror(errno)))")
        }
        finished = true
        return BackupResult(storeID: last.storeID, format: last.format, byteCount: Int(received))
    }
}
