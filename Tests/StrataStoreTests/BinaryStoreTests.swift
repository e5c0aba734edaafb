import Foundation
import Testing
import StrataModel
import StrataQuery
@testable import StrataStore
@testable import StrataSQLite

/// What only the binary store does: its file (atomic replacement,
/// corruption reports with byte offsets, version hashes and lightweight
/// migration), its lock, and read-only opens.
@Suite struct BinaryStoreTests {
    typealias F = StoreFixture

    /// A switch a fault hook reads: when armed at a stage, the write fails there.
    final class FaultSwitch: @unchecked Sendable {
        // Safe: `stage` is only read and written while holding `lock`.
        private let lock = NSLock()
        private var stage: StoreFile.Stage?

        func arm(_ stage: StoreFile.Stage?) {
            lock.withLock { self.stage = stage }
        }

        var hook: StoreFile.FaultHook {
            { [self] stage in
                if lock.withLock({ self.stage == stage }) { throw InjectedFailure(stage: stage) }
            }
        }

        struct InjectedFailure: Error { var stage: StoreFile.Stage }
    }

    private func description(_ directory: URL, readOnly: Bool = false, migrates: Bool = true) -> StoreDescription {
        StoreDescription(url: directory.appendingPathComponent("store.strata"), type: .binary, isReadOnly: readOnly, migratesAutomatically: migrates)
    }

    private func storeFile(_ directory: URL) -> URL { directory.appendingPathComponent("store.strata") }

    private func expectOpenFailure(
        _ directory: URL,
        code: StrataError.Code = .storeOpen,
        model: ObjectModel = StoreFixture.model,
        migrates: Bool = true,
        containing fragments: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        do {
            let store = try await StoreFactory.standard.open(description(directory, migrates: migrates), model: model)
            Issue.record("the store opened", sourceLocation: sourceLocation)
            try? await store.close()
        } catch let error as StrataError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            for fragment in fragments {
                #expect(error.description.contains(fragment), "\(error) should mention \(fragment)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Atomic writes

    @Test(arguments: [StoreFile.Stage.beforeWrite, .beforeRename])
    func aFailedWriteLeavesTheFileAndTheStoreAsTheyWere(_ stage: StoreFile.Stage) async throws {
        try await TestDirectory.with { directory in
            let faults = FaultSwitch()
            let store = try await BinaryStore(description: description(directory), model: F.model, fault: faults.hook)
            let saved = try await LibraryData.standard.save(into: store)
            let before = try Data(contentsOf: storeFile(directory))
            let snapshots = try await store.fetchSnapshots(F.all("Book"))

            faults.arm(stage)
            let temporary = ObjectID.temporary(entityName: "Book")
            await #expect {
                _ = try await store.save(StoreChanges(
                    inserts: [.init(temporaryID: temporary, values: ["title": .string("lost")])],
                    updates: [.init(objectID: saved.books[0], expectedVersion: 1, values: ["title": .string("lost too")])]
                ))
            } throws: { error in
                (error as? StrataError)?.code == .storeSave
            }
            #expect(try Data(contentsOf: storeFile(directory)) == before, "the old file is untouched")
            #expect(!FileManager.default.fileExists(atPath: storeFile(directory).path + ".tmp"), "the temporary file is removed")
            #expect(try await store.fetchSnapshots(F.all("Book")) == snapshots, "the store did not change either")

            faults.arm(nil)
            let commit = try await F.commit(store, StoreChanges(
                inserts: [.init(temporaryID: temporary, values: ["title": .string("kept")])],
                updates: [.init(objectID: saved.books[0], expectedVersion: 1, values: ["title": .string("kept too")])]
            ))
            let lastKey = try #require(saved.books.last?.primaryKey)
            #expect(commit.permanentIDs[temporary]?.primaryKey == lastKey + 1, "the failed save used no primary key")
            try await store.close()

            let reopened = try await StoreFactory.standard.open(description(directory), model: F.model)
            #expect(try await F.snapshot(reopened, saved.books[0])["title"] == .string("kept too"))
            #expect(try await reopened.count(F.all("Book")) == snapshots.count + 1)
            try await reopened.close()
        }
    }

    @Test func aTemporaryFileThatCannotBeCreatedFailsTheSaveCleanly() async throws {
        try await TestDirectory.with { directory in
            let store = try await StoreFactory.standard.open(description(directory), model: F.model)
            try await LibraryData.standard.save(into: store)
            let before = try Data(contentsOf: storeFile(directory))
            // A directory where the temporary file goes: open(2) fails (EISDIR), as a
            // full disk or a read-only directory would make it fail.
            let blocker = URL(fileURLWithPath: storeFile(directory).path + ".tmp")
            try FileManager.default.createDirectory(at: blocker, withIntermediateDirectories: false)
            let insert = StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("x")])])
            do {
                _ = try await store.save(insert)
                Issue.record("the save went through")
            } catch let error as StrataError {
                #expect(error.code == .storeSave)
                #expect(error.message.contains("store.strata.tmp"), "\(error)")
                #expect(error.message.contains("unchanged"), "\(error)")
            }
            #expect(try Data(contentsOf: storeFile(directory)) == before)
            #expect(try await store.count(F.all("Tag")) == LibraryData.standard.tags.count)
            try FileManager.default.removeItem(at: blocker)
            try await F.commit(store, insert)
            #expect(try await store.count(F.all("Tag")) == LibraryData.standard.tags.count + 1)
            try await store.close()
        }
    }

    @Test func theFileIsRewrittenAtEverySaveAndReadsBackTheSame() async throws {
        try await TestDirectory.with { directory in
            let store = try await StoreFactory.standard.open(description(directory), model: F.model)
            let empty = try Data(contentsOf: storeFile(directory))
            #expect(empty.prefix(8) == Data("STRATAB1".utf8), "a new store is written at once, magic first")
            try await LibraryData.standard.save(into: store)
            let full = try Data(contentsOf: storeFile(directory))
            #expect(full.count > empty.count)
            _ = try await store.save(StoreChanges())
            #expect(try Data(contentsOf: storeFile(directory)) == full, "an empty save writes nothing")
            let conflict = try await store.save(StoreChanges(deletes: [.init(objectID: ObjectID(storeIdentifier: store.identifier, entityName: "Tag", key: .permanent(1)), expectedVersion: 7)]))
            #expect(conflict != .committed(StoreCommit()))
            #expect(try Data(contentsOf: storeFile(directory)) == full, "a refused save writes nothing")
            try await store.close()

            // Encoding is deterministic: reading and re-encoding gives the same bytes.
            let layout = try MemoryLayout(model: F.model, entityNames: Set(F.model.entities.map(\.name)))
            var decoder = try BinaryStoreDecoder([UInt8](full))
            try decoder.readSchema()
            let storage = try decoder.readStorage(layout: layout, defaults: [:])
            let again = BinaryStoreFormat.encode(storage, schema: StoredSchema(model: F.model, entityNames: layout.entityNames), modelName: F.model.name)
            #expect(Data(again) == full)
        }
    }

    // MARK: - Corruption

    @Test func theChecksumIsCRC32() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(CRC32.checksum(bytes, range: 3..<997) == CRC32.checksum(Array(bytes[3..<997])))
    }

    @Test func corruptFilesAreReportedWithTheByteOffset() async throws {
        try await TestDirectory.with { directory in
            let store = try await StoreFactory.standard.open(description(directory), model: F.model)
            try await LibraryData.standard.save(into: store)
            try await store.close()
            let good = [UInt8](try Data(contentsOf: storeFile(directory)))
            let path = storeFile(directory).path

            func open(_ bytes: [UInt8], expecting fragments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
                try Data(bytes).write(to: storeFile(directory))
                await expectOpenFailure(directory, containing: ["\(path): corrupt at byte offset"] + fragments, sourceLocation: sourceLocation)
            }

            var flipped = good
            flipped[good.count / 2] ^= 0x40
            try await open(flipped, expecting: ["offset 32: payload checksum mismatch"])
            var magic = good
            magic[3] = UInt8(ascii: "X")
            try await open(magic, expecting: ["offset 0: not a Strata binary store"])
            var header = good
            header[17] ^= 0x01
            try await open(header, expecting: ["offset 28: header checksum mismatch"])
            for length in [0, 5, 31] {
                try await open(Array(good.prefix(length)), expecting: ["offset \(length): truncated header"])
            }
            for length in [32, 100, good.count / 2, good.count - 1] {
                try await open(Array(good.prefix(length)), expecting: ["offset \(length): truncated", "payload bytes"])
            }
            try await open(good + [0, 0, 0], expecting: ["offset \(good.count): 3 unexpected bytes after the payload"])

            // Damage under valid checksums: the parser names the exact offset.
            let uuid = [UInt8](repeating: 0xAB, count: 16)
            try await open(BinaryStoreFormat.file(payload: uuid + [0x80]), expecting: ["offset 49: length of model name needs 1 bytes, only 0 left"])
            var unknownTable = ByteWriter()
            unknownTable.raw(uuid)
            unknownTable.string("M")
            unknownTable.count(0)
            unknownTable.count(1)
            unknownTable.string("Nope")
            try await open(BinaryStoreFormat.file(payload: unknownTable.bytes), expecting: ["offset 52: rows stored for 'Nope'"])
            var hugeCount = ByteWriter()
            hugeCount.raw(uuid)
            hugeCount.string("M")
            hugeCount.varint(1 << 40)
            try await open(BinaryStoreFormat.file(payload: hugeCount.bytes), expecting: ["offset 50: entity count is 1099511627776, but only 0 bytes are left"])
            try await open(BinaryStoreFormat.file(payload: [UInt8](repeating: 0, count: 16)), expecting: ["offset 32: the store UUID is all zeros"])
        }
    }

    /// Random damage behind valid checksums never crashes the reader: every
    /// open either succeeds or fails with a StrataError.
    @Test func randomlyDamagedPayloadsNeverCrashTheReader() async throws {
        try await TestDirectory.with { directory in
            let store = try await StoreFactory.standard.open(description(directory), model: F.model)
            try await LibraryData.standard.save(into: store)
            try await store.close()
            let good = [UInt8](try Data(contentsOf: storeFile(directory)))
            let payload = Array(good[BinaryStoreFormat.headerSize...])
            var rng = SplitMix(seed: 7)
            var failures = 0
            for round in 0..<150 {
                var damaged = payload
                switch round % 3 {
                case 0:
                    for _ in 0..<(1 + Int(rng.next() % 3)) { damaged[Int(rng.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: rng.next()) }
                case 1:
                    damaged.removeSubrange(Int(rng.next() % UInt64(damaged.count))..<damaged.count)
                default:
                    let at = Int(rng.next() % UInt64(damaged.count))
                    damaged.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
                }
                try Data(BinaryStoreFormat.file(payload: damaged)).write(to: storeFile(directory))
                do {
                    let reopened = try await StoreFactory.standard.open(description(directory), model: F.model)
                    _ = try await reopened.fetchSnapshots(F.all("Book"))
                    try await reopened.close()
                } catch let error as StrataError {
                    #expect([.storeOpen, .incompatibleVersionHash].contains(error.code), "\(error)")
                    failures += 1
                }
            }
            #expect(failures > 100)
        }
    }

    // MARK: - Locking

    @Test func aSecondOpenIsRefusedUntilTheFirstCloses() async throws {
        try await TestDirectory.with { directory in
            let first = try await StoreFactory.standard.open(description(directory), model: F.model)
            for readOnly in [false, true] {
                do {
                    let second = try await StoreFactory.standard.open(description(directory, readOnly: readOnly), model: F.model)
                    Issue.record("a second store opened (read-only: \(readOnly))")
                    try await second.close()
                } catch let error as StrataError {
                    #expect(error.code == .storeOpen)
                    #expect(error.message.contains("open in another process"), "\(error)")
                }
            }
            // Another process sees the lock too.
            let flock = URL(fileURLWithPath: "/usr/bin/flock")
            if FileManager.default.isExecutableFile(atPath: flock.path) {
                let lockPath = storeFile(directory).path + ".lock"
                #expect(try runProcess(flock, ["--nonblock", "--exclusive", lockPath, "true"]) != 0)
                try await first.close()
                #expect(try runProcess(flock, ["--nonblock", "--exclusive", lockPath, "true"]) == 0)
            } else {
                try await first.close()
            }
            let again = try await StoreFactory.standard.open(description(directory), model: F.model)
            #expect(again.identifier == first.identifier)
            try await again.close()

            // Read-only opens share the lock with each other, not with a writer.
            let readers = [try await StoreFactory.standard.open(description(directory, readOnly: true), model: F.model),
                           try await StoreFactory.standard.open(description(directory, readOnly: true), model: F.model)]
            await #expect(throws: StrataError.self) { _ = try await StoreFactory.standard.open(description(directory), model: F.model) }
            for reader in readers { try await reader.close() }
        }
    }

    @Test func theLockIsReleasedWhenTheStoreGoesAway() async throws {
        try await TestDirectory.with { directory in
            do {
                _ = try await StoreFactory.standard.open(description(directory), model: F.model)
            }
            // The store above is gone without close(): its lock went with it.
            let store = try await StoreFactory.standard.open(description(directory), model: F.model)
            try await store.close()
        }
    }

    private func runProcess(_ executable: URL, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    // MARK: - Read-only

    @Test func readOnlyOpensNeverTouchTheFile() async throws {
        try await TestDirectory.with { directory in
            // A missing file is not created read-only.
            do {
                _ = try await StoreFactory.standard.open(description(directory, readOnly: true), model: F.model)
                Issue.record("a read-only store opened without a file")
            } catch let error as StrataError {
                #expect(error.code == .storeOpen)
                #expect(error.message.contains("read-only"), "\(error)")
            }
            #expect(!FileManager.default.fileExists(atPath: storeFile(directory).path))

            let writer = try await StoreFactory.standard.open(description(directory), model: F.model)
            let saved = try await LibraryData.standard.save(into: writer)
            try await writer.close()
            let path = storeFile(directory).path
            let before = try Data(contentsOf: storeFile(directory))
            let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date

            let reader = try await StoreFactory.standard.open(description(directory, readOnly: true), model: F.model)
            #expect(try await reader.count(F.all("Book")) == saved.books.count)
            for changes in [StoreChanges(), StoreChanges(deletes: [.init(objectID: saved.books[0], expectedVersion: 1)])] {
                do {
                    _ = try await reader.save(changes)
                    Issue.record("a read-only store saved")
                } catch let error as StrataError {
                    #expect(error.code == .storeSave)
                }
            }
            #expect(try await reader.count(F.all("Book")) == saved.books.count)
            try await reader.close()
            #expect(try Data(contentsOf: storeFile(directory)) == before)
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == modified)
            #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
        }
    }

    // MARK: - Version hashes and lightweight migration

    /// The fixture model with some entities replaced or added.
    private func model(replacing replacements: [EntityDescription], adding added: [EntityDescription] = [], removing removed: Set<String> = []) -> ObjectModel {
        var entities = F.model.entities.filter { !removed.contains($0.name) }.map { entity in
            replacements.first { $0.name == entity.name } ?? entity
        }
        entities += added
        return ObjectModel(name: "StoreFixture v2", entities: entities)
    }

    private func book(adding attributes: [AttributeDescription] = [], changing change: (inout [AttributeDescription]) -> Void = { _ in }) throws -> EntityDescription {
        var book = try #require(F.model.entity(named: "Book"))
        change(&book.attributes)
        book.attributes += attributes
        return book
    }

    @Test func aModelThatDoesNotFitIsRefusedNamingEachEntity() async throws {
        try await TestDirectory.with { directory in
            let store = try await StoreFactory.standard.open(description(directory), model: F.model)
            try await LibraryData.standard.save(into: store)
            try await store.close()
            let before = try Data(contentsOf: storeFile(directory))

            let retyped = model(replacing: [try book { attributes in
                if let i = attributes.firstIndex(where: { $0.name == "pages" }) { attributes[i].type = .string }
            }])
            await expectOpenFailure(directory, code: .incompatibleVersionHash, model: retyped,
                                    containing: ["2 entities differ: Book, EBook", "Book: attribute 'pages' changed type from Integer 32 to String"])
            let mandatory = model(replacing: [try book(adding: [AttributeDescription(name: "edition", type: .integer16)])])
            await expectOpenFailure(directory, code: .incompatibleVersionHash, model: mandatory,
                                    containing: ["Book: mandatory attribute 'edition' added without a default value"])
            let removed = model(replacing: [], removing: ["Shelf"])
            await expectOpenFailure(directory, code: .incompatibleVersionHash, model: removed,
                                    containing: ["Shelf: the entity is not in the model"])
            let added = model(replacing: [try book(adding: [AttributeDescription(name: "subtitle", type: .string, isOptional: true)])])
            await expectOpenFailure(directory, code: .incompatibleVersionHash, model: added, migrates: false,
                                    containing: ["Book: optional attribute 'subtitle' added", "automatic migration is off"])
            #expect(try Data(contentsOf: storeFile(directory)) == before, "refused opens leave the file alone")
        }
    }

    @Test func lightweightChangesMigrateWhenOpening() async throws {
        try await TestDirectory.with { directory in
            let store = try await StoreFactory.standard.open(description(directory), model: F.model)
            let saved = try await LibraryData.standard.save(into: store)
            try await store.close()

            var tag = try #require(F.model.entity(named: "Tag"))
            tag.attributes = []   // 'name' removed
            let newModel = model(
                replacing: [
                    try book(adding: [
                        AttributeDescription(name: "subtitle", type: .string, isOptional: true),
                        AttributeDescription(name: "edition", type: .integer16, defaultValue: .integer(1)),
                    ]),
                    tag,
                ],
                adding: [EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string, isOptional: true)])]
            )
            let migrated = try await StoreFactory.standard.open(description(directory), model: newModel)
            let book = try await F.snapshot(migrated, saved.books[0])
            #expect(book["subtitle"] == .null)
            #expect(book["edition"] == .integer(1))
            #expect(book["title"] == .string(try #require(LibraryData.standard.books[0].title)))
            let ebook = try await F.snapshot(migrated, try #require(saved.books.first { $0.entityName == "EBook" }))
            #expect(ebook["edition"] == .integer(1), "subentities get the default too")
            #expect(try await F.snapshot(migrated, saved.tags[0]).values.isEmpty)
            #expect(try await migrated.destinations(of: "tags", for: saved.books[0]).count == LibraryData.standard.books[0].tags.count, "links survive")
            let note = ObjectID.temporary(entityName: "Note")
            try await F.commit(migrated, StoreChanges(inserts: [.init(temporaryID: note, values: ["text": .string("new entity")])]))
            try await migrated.close()

            // The file now records the new model: it reopens as is. Going back
            // would drop the new entity (not lightweight); its removed
            // attributes alone would be.
            let reopened = try await StoreFactory.standard.open(description(directory, migrates: false), model: newModel)
            #expect(try await reopened.count(F.fetch("Book", nil)) == saved.books.count)
            try await reopened.close()
            await expectOpenFailure(directory, code: .incompatibleVersionHash, model: F.model,
                                    containing: ["1 entity differs: Note", "Note: the entity is not in the model"])
        }
    }

    @Test func storesNeedAFileURL() async throws {
        await #expect { _ = try await StoreFactory.standard.open(StoreDescription(url: nil, type: .binary), model: F.model) } throws: { error in
            (error as? StrataError)?.code == .storeOpen
        }
    }
}
