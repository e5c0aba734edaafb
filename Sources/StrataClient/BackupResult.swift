/// What ``StrataClient/backup(store:to:)`` wrote.
public struct BackupResult: Sendable, Hashable {
    /// The identifier of the store copied (kept by the copy).
    public var storeID: String
    /// The kind of store file: `sqlite` or `binary`.
    public var format: String
    /// The size of the file written, in bytes.
    public var byteCount: Int

    /// A description of a backup received.
    public init(storeID: String, format: String, byteCount: Int) {
        self.storeID = storeID
        self.format = format
        self.byteCount = byteCount
    }
}
