import Foundation

/// A store that can copy itself into a new file, consistently and while
/// saves go on: what a server streams to `strata backup`.
///
/// The copy holds every save committed before ``backup(to:)`` was called
/// (and perhaps some committed while it ran, each whole), and is a store
/// file of ``StoreBackup/format`` that a server or an embedded program
/// opens as it would the original (read-only with `?readonly`), or puts in
/// the original's place to restore it.
public protocol BackupCapableStore: PersistentStore {
    /// Writes a consistent copy of the store to `url`, which must not
    /// exist. Saves are not held back while it runs (a SQLite store copies
    /// from a read transaction's snapshot); a binary or in-memory store
    /// copies between two saves. Fails with 134080 when the store is closed
    /// or the copy cannot be written; a failed copy leaves nothing at `url`.
    func backup(to url: URL) async throws -> StoreBackup
}

/// What ``BackupCapableStore/backup(to:)`` wrote.
public struct StoreBackup: Sendable, Hashable {
    /// The identifier of the store copied (the copy keeps it: object IDs
    /// stay valid).
    public var storeIdentifier: String
    /// The kind of store file written: ``StoreDescription/StoreType/sqlite``
    /// for a SQLite store, ``StoreDescription/StoreType/binary`` for a
    /// binary or in-memory one.
    public var format: StoreDescription.StoreType
    /// The size of the file written, in bytes.
    public var byteCount: Int

    /// A description of a backup.
    public init(storeIdentifier: String, format: StoreDescription.StoreType, byteCount: Int) {
        self.storeIdentifier = storeIdentifier
        self.format = format
        self.byteCount = byteCount
    }

    /// The size of the file at `url` (0 when it cannot be read).
    package static func size(of url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
