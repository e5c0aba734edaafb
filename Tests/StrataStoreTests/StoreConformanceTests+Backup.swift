import Foundation
import GRDB
import Testing
import StrataModel
import StrataQuery
@testable import StrataStore
@testable import StrataSQLite

/// Every store copies itself into a store file that opens read-only with
/// the same identifier, objects, values and relationships, and that
/// `StoreRestore` puts back in a store's place.
extension StoreConformanceTests {
    /// The kind of store a backup of `kind` is.
    static func backupKind(_ kind: StoreKind) -> StoreKind { kind == .sqlite ? .sqlite : .binary }

    /// PostgreSQL stores are backed up with `pg_dump` (docs), not through
    /// `BackupCapableStore`.
    @Test(arguments: StoreKind.allCases.filter { $0 != .postgres })
    func aBackupOpensReadOnlyWithEveryObject(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let author = ObjectID.temporary(entityName: "Author"), book = ObjectID.temporary(entityName: "Book")
            let tag = ObjectID.temporary(entityName: "Tag")
            let seeded = try await F.commit(store, StoreChanges(inserts: [
                .init(temporaryID: author, values: ["name": .string("Le Guin")]),
                .init(temporaryID: book, values: ["title": .string("The Dispossessed"), "isbn": .string("1"), "price": .decimal(Decimal(string: "9.99")!), "author": .object(author)], toMany: ["tags": [tag]]),
                .init(temporaryID: tag, values: ["name": .string("utopia")]),
                .init(temporaryID: .temporary(entityName: "Sample"), values: ["str": .string("NUL\0inside"), "blob": .binary(Data([0, 1, 2])), "uid": .uuid(UUID()), "when": .date(Date(timeIntervalSince1970: 1.5))]),
            ]))
            let bookID = try #require(seeded.permanentIDs[book])
            let copy = directory.appendingPathComponent("copy.\(Self.backupKind(kind) == .sqlite ? "sqlite" : "strata")")
            let backup = try #require(store as? any BackupCapableStore)
            let made = try await backup.backup(to: copy)
            #expect(made.storeIdentifier == store.identifier)
            #expect(made.format == Self.backupKind(kind).storeType)
            #expect(made.byteCount == (try FileManager.default.attributesOfItem(atPath: copy.path)[.size] as? Int))
            // A save after the backup is not in it.
            try await F.commit(store, StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("later")])]))

            let opened = try await StoreFactory.standard.open(StoreDescription(url: copy, type: Self.backupKind(kind).storeType, isReadOnly: true), model: StoreFixture.model)
            #expect(opened.identifier == store.identifier)
            for entity in ["Author", "Book", "Sample"] {
                let original = try await store.fetchSnapshots(F.all(entity)).map(F.portable)
                let copied = try await opened.fetchSnapshots(F.all(entity)).map(F.portable)
                #expect(copied == original, "\(entity)")
            }
            #expect(try await opened.count(F.all("Tag")) == 1)
            #expect(try await opened.destinations(of: "tags", for: bookID).count == 1)
            try await opened.close()
            try await store.close()
            // Never over an existing file.
            if kind != .inMemory {
                let again = try await F.open(kind, in: directory) as? any BackupCapableStore
                await #expect(throws: StrataError.self) { _ = try await again?.backup(to: copy) }
                try await again?.close()
            }
        }
    }

    @Test(arguments: [StoreKind.sqlite, .binary])
    func aRestoreReplacesTheStoreAndKeepsItsFiles(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            try await F.commit(store, StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("kept")])]))
            let copy = directory.appendingPathComponent("backup")
            _ = try await (store as? any BackupCapableStore)?.backup(to: copy)
            try await F.commit(store, StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("after the backup")])]))
            let target = try #require(kind.url(in: directory))
            // Not while the store is open.
            #expect(throws: StrataError.self) { try StoreRestore.restore(from: copy, to: target) }
            try await store.close()

            let outcome = try StoreRestore.restore(from: copy, to: target)
            #expect(outcome.format == kind.storeType)
            #expect(outcome.keptFiles.contains { $0.hasPrefix(target.path + ".replaced-") })
            for kept in outcome.keptFiles { #expect(FileManager.default.fileExists(atPath: kept)) }
            let reopened = try await F.open(kind, in: directory)
            #expect(try await reopened.fetchSnapshots(F.all("Tag")).map { $0.values["name"] } == [.string("kept")])
            // The restored store takes saves.
            try await F.commit(reopened, StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("new")])]))
            try await reopened.close()
        }
    }

    @Test func aRestoredSQLiteStoreNeverHandsOutAKeyOrTokenAgain() async throws {
        try await TestDirectory.with { directory in
            let target = try #require(StoreKind.sqlite.url(in: directory))
            var store = try await SQLiteStore(description: StoreDescription(url: target, type: .sqlite), model: StoreFixture.model)
            let first = try await F.commit(store, StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("before")])]))
            let copy = directory.appendingPathComponent("backup")
            _ = try await store.backup(to: copy)
            var later: [ObjectID] = []
            for index in 0..<3 {
                let temporary = ObjectID.temporary(entityName: "Tag")
                let commit = try await F.commit(store, StoreChanges(inserts: [.init(temporaryID: temporary, values: ["name": .string("after \(index)")])]))
                later.append(try #require(commit.permanentIDs[temporary]))
            }
            let consumerToken = try await store.currentHistoryToken()
            try await store.close()

            let outcome = try StoreRestore.restore(from: copy, to: target)
            #expect(outcome.historyToken == consumerToken.value + 1)
            store = try await SQLiteStore(description: StoreDescription(url: target, type: .sqlite), model: StoreFixture.model)
            #expect(try await store.count(F.all("Tag")) == 1)
            let temporary = ObjectID.temporary(entityName: "Tag")
            let commit = try await F.commit(store, StoreChanges(inserts: [.init(temporaryID: temporary, values: ["name": .string("restored")])]))
            let fresh = try #require(commit.permanentIDs[temporary])
            func key(_ id: ObjectID) -> Int64 {
                if case .permanent(let value) = id.key { return value }
                return 0
            }
            #expect(!later.contains(fresh) && key(fresh) > (later.map(key).max() ?? 0), "\(fresh) was handed out before the restore")
            #expect(first.permanentIDs.values.allSatisfy { key($0) < key(fresh) })
            // A consumer's token from before the restore expired: fetch again.
            await #expect(throws: StrataError.self) { _ = try await store.history(after: consumerToken, limit: 10) }
            do {
                _ = try await store.history(after: consumerToken, limit: 10)
            } catch let error as StrataError {
                #expect(error.code == .historyTokenExpired)
            }
            // From the restore on, history reads on: the new save follows it.
            let restart = HistoryToken(storeIdentifier: store.identifier, value: outcome.historyToken)
            #expect(try await store.history(after: restart, limit: 10).count == 1)
            try await store.close()
            // Two restores within a second keep both sets of replaced files.
            let again = try StoreRestore.restore(from: copy, to: target)
            #expect(Set(again.keptFiles).isDisjoint(with: outcome.keptFiles))
            for kept in outcome.keptFiles + again.keptFiles { #expect(FileManager.default.fileExists(atPath: kept)) }
        }
    }

    @Test func aRestoreRefusesWhatIsNotASoundBackup() async throws {
        try await TestDirectory.with { directory in
            let target = directory.appendingPathComponent("store.sqlite")
            let garbage = directory.appendingPathComponent("garbage")
            try Data("not a store at all".utf8).write(to: garbage)
            #expect(throws: StrataError.self) { try StoreRestore.restore(from: garbage, to: target) }
            // A SQLite database that is not a Strata store.
            let foreign = directory.appendingPathComponent("foreign.sqlite")
            try await DatabaseQueue(path: foreign.path).write { try $0.execute(sql: "CREATE TABLE t(x)") }
            let error = #expect(throws: StrataError.self) { try StoreRestore.restore(from: foreign, to: target) }
            #expect(error?.message.contains("not a Strata store") == true)
            // A binary store file cut short.
            let store = try await F.open(.binary, in: directory)
            try await F.commit(store, StoreChanges(inserts: [.init(temporaryID: .temporary(entityName: "Tag"), values: ["name": .string("x")])]))
            let copy = directory.appendingPathComponent("copy.strata")
            _ = try await (store as? any BackupCapableStore)?.backup(to: copy)
            try await store.close()
            let bytes = try Data(contentsOf: copy)
            try bytes.prefix(bytes.count - 3).write(to: copy)
            #expect(throws: StrataError.self) { try StoreRestore.restore(from: copy, to: directory.appendingPathComponent("other.strata")) }
            // Nothing was created or replaced.
            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("other.strata").path))
        }
    }
}
