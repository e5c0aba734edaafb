#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import StrataContext
import StrataModel
import StrataStore
import StrataWire

extension ServerCore {
    /// The most file bytes one backup frame carries.
    static let backupChunkBytes = 1 << 20
    /// The prefix of the private folders backups are made in.
    static let backupFolderPrefix = ".strata-backup-"

    /// Answers a backup request: the store named copies itself into a
    /// private folder (0700) beside its file, whose bytes go out in chunks
    /// through `send` (which waits while the client does not read); the
    /// folder is removed when the request ends, however it ends. The last
    /// chunk carries the file's SHA-256. One backup runs at a time per
    /// server, and only with room for the copy on the store's disk.
    func backup(_ request: Strata_V1_BackupRequest, send: (Strata_V1_BackupChunk, _ more: Bool) async throws -> Void) async throws {
        let store = try namedStore(request.store)
        let name = store.configurationName ?? store.identifier
        guard let source = store as? any BackupCapableStore else {
            throw WireError(.failedPrecondition, "store \(name) (\(store.storeDescription.type.rawValue)) cannot be backed up by the server")
        }
        guard backupRunning.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw WireError(.resourceExhausted, "another backup is running on this server: retry when it has ended")
        }
        defer { backupRunning.store(false, ordering: .releasing) }
        let folder = try BackupFolder(beside: store.storeDescription.url, storeName: name)
        defer { folder.remove() }
        if let needed = Self.spaceNeeded(by: store.storeDescription), let free = folder.freeBytes, free < needed {
            throw WireError(.resourceExhausted, "backup of store \(name) needs about \(needed / (1 << 20)) MiB of free disk beside the store, and \(free / (1 << 20)) MiB are free")
        }
        let file = folder.url.appendingPathComponent("copy")
        let made: StoreBackup
        do {
            made = try await source.backup(to: file)
        } catch let error as StrataError {
            // The copy's path is nobody's business but the log's.
            throw StrataError(error.code, "backup of store \(name) failed: \(error.message.replacingOccurrences(of: file.path, with: "the copy"))", details: error.details)
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: file)
        } catch {
            throw StrataError(.storeOpen, "backup of store \(name): the copy cannot be read back: \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        // The size of the file opened, not the one the store reported.
        let total = Int((try? handle.seekToEnd()) ?? 0)
        try handle.seek(toOffset: 0)
        guard total > 0, total == made.byteCount else {
            throw StrataError(.storeOpen, "backup of store \(name): the copy is \(total) bytes, not the \(made.byteCount) written")
        }
        let chunkBytes = max(1, min(Self.backupChunkBytes, configuration.maxFrameBytes - 512))
        var hasher = SHA256()
        var offset = 0
        while true {
            try Task.checkCancellation()
            let data = try handle.read(upToCount: min(chunkBytes, total - offset)) ?? Data()
            guard !data.isEmpty else {
                throw StrataError(.storeOpen, "backup of store \(name): the copy ended at byte \(offset) of \(total)")
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

    /// About the disk a copy of the store takes (its file and log, a tenth
    /// more, and 16 MiB); nil for a store without a file.
    static func spaceNeeded(by description: StoreDescription) -> Int? {
        guard let url = description.url else { return nil }
        let files = description.type == .sqlite ? ["", "-wal"] : [""]
        let bytes = files.reduce(0) { sum, suffix in
            sum + (((try? FileManager.default.attributesOfItem(atPath: url.path + suffix))?[.size] as? NSNumber)?.intValue ?? 0)
        }
        return bytes + bytes / 10 + 16 * (1 << 20)
    }

    /// Removes the backup folders a server left behind when it stopped
    /// mid-backup (those whose lock no process holds), beside each store.
    static func removeStaleBackups(of stores: [any PersistentStore]) {
        let folders = Set(stores.compactMap { $0.storeDescription.url?.deletingLastPathComponent().path })
        for folder in folders {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for name in names where name.hasPrefix(backupFolderPrefix) {
                BackupFolder.removeIfAbandoned(URL(fileURLWithPath: folder).appendingPathComponent(name))
            }
        }
    }
}

/// A private folder (0700) a backup is made in, locked (`flock` on a file
/// inside) while the backup runs, so that a server starting on the same
/// data directory removes only abandoned ones.
struct BackupFolder {
    let url: URL
    private let lock: Int32

    /// Creates the folder beside the store's file when the server may
    /// write there (same disk, no copy between file systems), else in the
    /// system's temporary folder.
    init(beside storeURL: URL?, storeName: String) throws {
        let name = ServerCore.backupFolderPrefix + UUID().uuidString
        var parent = FileManager.default.temporaryDirectory
        if let folder = storeURL?.deletingLastPathComponent(), FileManager.default.isWritableFile(atPath: folder.path) {
            parent = folder
        }
        url = parent.appendingPathComponent(name, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StrataError(.storeOpen, "backup of store \(storeName): cannot create a folder for the copy: \(error.localizedDescription)")
        }
        lock = open(url.appendingPathComponent("lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if lock >= 0 { _ = flock(lock, LOCK_EX | LOCK_NB) }
    }

    /// Free bytes on the folder's file system, when the system says.
    var freeBytes: Int? {
        var info = statvfs()
        guard statvfs(url.path, &info) == 0 else { return nil }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Removes the folder and everything in it, and releases the lock.
    func remove() {
        try? FileManager.default.removeItem(at: url)
        if lock >= 0 { close(lock) }
    }

    /// Removes `folder` when no process holds its lock.
    static func removeIfAbandoned(_ folder: URL) {
        let fd = open(folder.appendingPathComponent("lock").path, O_RDWR | O_CLOEXEC)
        if fd >= 0 {
            defer { close(fd) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return }
        }
        try? FileManager.default.removeItem(at: folder)
    }
}
