import Foundation
import GRDB
import StrataModel
import StrataStore

extension SQLiteStore: BackupCapableStore {
    /// Copies the store with SQLite's online backup API from one read
    /// transaction on a reader connection: a snapshot that holds every save
    /// committed before it began, while the writer goes on committing. The
    /// copy is then switched out of WAL mode (one self-contained file, no
    /// `-wal` beside it) and checked with `PRAGMA quick_check`.
    public func backup(to url: URL) async throws -> StoreBackup {
        let database = try openDatabase()
        let path = url.path
        guard !FileManager.default.fileExists(atPath: path) else {
            throw StrataError(.storeOpen, "backup of store \(self.path): \(path) already exists")
        }
        do {
            let destination = try DatabaseQueue(path: path)
            do {
                try await database.read { source in
                    try destination.writeWithoutTransaction { target in
                        try source.backup(to: target)
                    }
                }
                try await destination.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA journal_mode = DELETE")
                    let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
                    guard check == ["ok"] else {
                        throw StrataError(.storeOpen, "backup of store \(self.path): the copy fails its check: \(check.prefix(3).joined(separator: "; "))")
                    }
                }
                try destination.close()
            } catch {
                try? destination.close()
                throw error
            }
        } catch {
            Self.removeBackupFiles(at: path)
            if let error = error as? StrataError { throw error }
            throw strataError(error, failure: .storeOpen, operation: "backup")
        }
        return StoreBackup(storeIdentifier: identifier, format: .sqlite, byteCount: StoreBackup.size(of: url))
    }

    /// Removes a SQLite file and whatever SQLite keeps beside it.
    static func removeBackupFiles(at path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
