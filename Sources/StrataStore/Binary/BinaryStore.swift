import Foundation
import StrataModel
import StrataQuery

/// A store kept whole in one file: read at open, rewritten atomically at
/// every save.
///
/// The rows, relationships, fetch and save logic are ``MemoryStorage``'s
/// (shared with ``InMemoryStore``); this actor adds the file. The format is
/// ``BinaryStoreFormat`` (magic `STRATAB1`, a version, the store UUID,
/// model name, each entity's version hash and persisted shape, primary-key
/// counters, rows with typed values, link tables, CRC-32 checksums).
///
/// - Opening a missing file creates an empty store (a read-only store
///   refuses, 134080). A corrupt or truncated file fails with 134080
///   naming the byte offset. A model whose version hashes differ fails with
///   134100 naming each entity, unless every difference is lightweight and
///   the description migrates automatically (added entities, added
///   optional or defaulted attributes, removed properties).
/// - A save applies the changes to a copy, writes it (temporary file,
///   `fsync`, `rename`, directory `fsync`) and only then keeps it: a failed
///   write leaves both the file and the store as they were.
/// - One writer per file: an exclusive `flock` on `<path>.lock` is held
///   from open to close (shared for read-only stores); a second open fails
///   with 134080.
public actor BinaryStore: PersistentStore {
    /// The store's UUID, kept in the file.
    public nonisolated let identifier: String
    /// How the store was opened.
    public nonisolated let storeDescription: StoreDescription
    /// The model the store serves.
    public nonisolated let model: ObjectModel
    /// The configuration's entities and their subentities.
    public nonisolated let entityNames: Set<String>

    private let path: String
    let schema: StoredSchema
    private let fault: StoreFile.FaultHook?
    var storage: MemoryStorage
    private var lock: StoreFileLock?

    /// Opens (creating if missing) the store file the description names.
    public init(description: StoreDescription, model: ObjectModel) async throws {
        try await self.init(description: description, model: model, fault: nil)
    }

    /// Opens the store with a fault hook called at each step of every file
    /// write (tests use it to make writes fail).
    init(description: StoreDescription, model: ObjectModel, fault: StoreFile.FaultHook?) async throws {
        guard let url = description.url else {
            throw StrataError(.storeOpen, "a binary store needs a file URL (\(description.displayName))")
        }
        let path = url.standardizedFileURL.path
        let entityNames = StoreOpening.entityNames(configuration: description.configuration, model: model)
        let layout = try MemoryLayout(model: model, entityNames: entityNames)
        let schema = StoredSchema(model: model, entityNames: entityNames)
        if !description.isReadOnly {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw StrataError(.storeOpen, "\(path): cannot create directory \(directory.path): \(error.localizedDescription)")
            }
        }
        let lock = try StoreFileLock(storePath: path, exclusive: !description.isReadOnly, displayName: path)

        let storage: MemoryStorage
        if let bytes = try StoreFile.load(path, displayName: path) {
            storage = try Self.decode(bytes, path: path, description: description, model: model, schema: schema, layout: layout)
        } else {
            guard !description.isReadOnly else {
                throw StrataError(.storeOpen, "\(path): no store file, and a read-only store cannot create one")
            }
            storage = MemoryStorage(identifier: UUID().uuidString, layout: layout)
            try Self.write(storage, schema: schema, model: model, to: path, displayName: path, fault: fault, code: .storeOpen)
        }
        self.identifier = storage.identifier
        self.storeDescription = description
        self.model = model
        self.entityNames = entityNames
        self.path = path
        self.schema = schema
        self.fault = fault
        self.storage = storage
        self.lock = lock
    }

    /// Snapshots of the objects a fetch selects, in order.
    public func fetchSnapshots(_ fetch: ResolvedFetch) async throws -> [Snapshot] {
        try checkOpen()
        return try storage.fetchSnapshots(fetch)
    }

    /// IDs of the objects a fetch selects, in order.
    public func fetchObjectIDs(_ fetch: ResolvedFetch) async throws -> [ObjectID] {
        try checkOpen()
        return try storage.fetchObjectIDs(fetch)
    }

    /// How many objects a fetch selects (limit and offset applied).
    public func count(_ fetch: ResolvedFetch) async throws -> Int {
        try checkOpen()
        return try storage.count(fetch)
    }

    /// The current snapshots of these objects, in the order asked; objects
    /// that do not exist are left out.
    public func snapshots(for objectIDs: [ObjectID]) async throws -> [Snapshot] {
        try checkOpen()
        return storage.snapshots(for: objectIDs)
    }

    /// The destinations of a to-many relationship of one object, in order
    /// for ordered relationships, else by primary key. Fails with 133000
    /// when the object does not exist.
    public func destinations(of relationship: String, for objectID: ObjectID) async throws -> [ObjectID] {
        try checkOpen()
        return try storage.destinations(of: relationship, for: objectID)
    }

    /// Writes one change set, all or nothing: the file is replaced
    /// atomically before the store's state changes. A read-only store
    /// refuses every save with 134030 and never touches its file.
    public func save(_ changes: StoreChanges) async throws -> StoreSaveResult {
        try checkOpen()
        guard !storeDescription.isReadOnly else {
            throw StrataError(.storeSave, "\(path): the store is read-only: saves are refused")
        }
        var next = storage
        let result = try next.save(changes)
        guard case .committed = result, !changes.isEmpty else { return result }
        try Self.write(next, schema: schema, model: model, to: path, displayName: path, fault: fault, code: .storeSave)
        storage = next
        return result
    }

    /// Releases the lock; later calls fail with 134080. Every save is
    /// already on disk, so there is nothing to flush.
    public func close() async throws {
        lock?.release()
        lock = nil
        storage = MemoryStorage(identifier: identifier, layout: storage.layout)
    }

    func checkOpen() throws(StrataError) {
        guard lock != nil else {
            throw StrataError(.storeOpen, "\(path): the store is closed")
        }
    }

    // MARK: - File

    static func write(
        _ storage: MemoryStorage,
        schema: StoredSchema,
        model: ObjectModel,
        to path: String,
        displayName: String,
        fault: StoreFile.FaultHook?,
        code: StrataError.Code
    ) throws(StrataError) {
        let bytes = BinaryStoreFormat.encode(storage, schema: schema, modelName: model.name)
        do {
            try StoreFile.writeAtomically(bytes, to: path, displayName: displayName, fault: fault)
        } catch {
            throw StrataError(code, error.message, details: error.details)
        }
    }

    static func decode(
        _ bytes: [UInt8],
        path: String,
        description: StoreDescription,
        model: ObjectModel,
        schema: StoredSchema,
        layout: MemoryLayout
    ) throws(StrataError) -> MemoryStorage {
        func corrupt(_ corruption: BinaryCorruption) -> StrataError {
            StrataError(.storeOpen, "\(path): corrupt at byte offset \(corruption.offset): \(corruption.reason)")
        }
        do {
            var decoder = try BinaryStoreDecoder(bytes)
            try decoder.readSchema()
            let comparison = decoder.schema.compare(to: schema, model: model)
            if !comparison.isIdentical {
                try checkCompatible(comparison, path: path, description: description, model: model, storedModelName: decoder.modelName)
            }
            return try decoder.readStorage(layout: layout, defaults: comparison.addedDefaults)
        } catch let corruption as BinaryCorruption {
            throw corrupt(corruption)
        } catch let error as StrataError {
            throw error
        } catch {
            throw StrataError(.storeOpen, "\(path): \(error)")
        }
    }

    private static func checkCompatible(
        _ comparison: StoredSchema.Comparison,
        path: String,
        description: StoreDescription,
        model: ObjectModel,
        storedModelName: String
    ) throws(StrataError) {
        var details = comparison.incompatible.map { "\($0.entity): \($0.reasons.joined(separator: "; "))" }
        if !description.migratesAutomatically {
            details += comparison.migratable.map { "\($0.entity): \($0.changes.joined(separator: "; ")) (lightweight, but automatic migration is off)" }
        }
        guard !details.isEmpty else { return }
        let entities = comparison.incompatible.map(\.entity) + (description.migratesAutomatically ? [] : comparison.migratable.map(\.entity))
        throw StrataError(
            .incompatibleVersionHash,
            "\(path): model '\(model.name)' does not fit the store (written by model '\(storedModelName)'): \(entities.count) entit\(entities.count == 1 ? "y differs" : "ies differ"): \(entities.joined(separator: ", "))",
            details: details
        )
    }
}
