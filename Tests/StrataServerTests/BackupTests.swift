import Foundation
import GRDB
import NIOConcurrencyHelpers
import StrataClient
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataSQLite
import StrataWire
import Testing

/// `backup` through a real socket: a consistent copy made while other
/// clients keep saving, streamed in chunks, checked by the client.
@Suite struct BackupTests {
    @Test func aBackupUnderConcurrentWritesHoldsEveryAcknowledgedSave() async throws {
        // Small frames: the copy arrives in many chunks.
        let server = try await TestServer.start { $0.maxFrameBytes = 64 * 1024 }
        let writer = server.client("writer"), backupClient = server.client("backup")
        defer { Task { await writer.close(); await backupClient.close() } }
        // A few hundred books so the file spans many pages and chunks.
        for batch in 0..<3 {
            _ = try await writer.save(Wire.save(inserts: (0..<100).map { Wire.insertBook("b\($0)", title: "Seed \(batch)-\($0) " + String(repeating: "x", count: 200)) }))
        }

        let acknowledged = NIOLockedValueBox<[UUID]>([])
        let writing = NIOLockedValueBox(true)
        let writers = (0..<3).map { _ in
            Task {
                while writing.withLockedValue({ $0 }) {
                    let uuid = UUID()
                    _ = try await writer.save(Wire.save(inserts: [Wire.insertBook("t", title: "During", uuid: uuid)]))
                    acknowledged.withLockedValue { $0.append(uuid) }
                }
            }
        }
        while acknowledged.withLockedValue({ $0.count }) < 30 { try await Task.sleep(for: .milliseconds(5)) }
        let before = Set(acknowledged.withLockedValue { $0 })
        let file = server.directory.appendingPathComponent("Books.backup")
        let result = try await backupClient.backup(store: "Book", to: file)
        let afterBackup = acknowledged.withLockedValue { $0.count }
        writing.withLockedValue { $0 = false }
        for task in writers { try await task.value }
        #expect(afterBackup > before.count, "saves went on during the backup")

        #expect(result.format == "sqlite")
        #expect(result.byteCount > 64 * 1024, "several chunks")
        #expect(result.storeID == server.container.coordinator.stores.first { $0.configurationName == "Book" }?.identifier)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".partial"))
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // No copy is left beside the stores.
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.directory.path).allSatisfy { !$0.hasPrefix(".strata-backup-") })

        // A sound, self-contained SQLite file...
        let raw = try DatabaseQueue(path: file.path, configuration: { var c = Configuration(); c.readonly = true; return c }())
        let (integrity, journal) = try await raw.read { db in
            (try String.fetchAll(db, sql: "PRAGMA integrity_check"), try String.fetchOne(db, sql: "PRAGMA journal_mode"))
        }
        #expect(integrity == ["ok"])
        #expect(journal == "delete")
        try raw.close()
        #expect(!FileManager.default.fileExists(atPath: file.path + "-wal"))
        // ...that a store opens read-only, with every save acknowledged
        // before the backup began, each whole.
        let store = try await SQLiteStore(description: StoreDescription(url: file, type: .sqlite, configuration: "Book", isReadOnly: true), model: BooksSample.model)
        let books = try await store.fetchSnapshots(ResolvedFetch(entityName: "Book"))
        try await store.close()
        let uuids = Set(books.compactMap { snapshot -> UUID? in
            if case .uuid(let uuid)? = snapshot.values["uuid"] { return uuid }
            return nil
        })
        #expect(before.isSubset(of: uuids))
        #expect(books.count >= 300 + before.count)
        // At most one save per writer was committed (so maybe copied) but
        // not yet acknowledged when the backup's answer came: the two
        // answers travel on different connections.
        #expect(books.count <= 300 + afterBackup + writers.count)
        try await server.stop()
    }

    @Test func storesAreNamedByConfigurationEntityOrIdentifier() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        defer { Task { await client.close() } }
        let feedback = try #require(server.container.coordinator.stores.first { $0.configurationName == "Feedback" })
        for name in ["Feedback", feedback.identifier] {
            let file = server.directory.appendingPathComponent("copy-\(UUID().uuidString)")
            #expect(try await client.backup(store: name, to: file).storeID == feedback.identifier)
        }
        let book = try await client.backup(store: "Book", to: server.directory.appendingPathComponent("book"))
        #expect(book.storeID != feedback.identifier)

        let file = server.directory.appendingPathComponent("never")
        let unknown = await #expect(throws: StrataClientError.self) { _ = try await client.backup(store: "Nope", to: file) }
        #expect(unknown?.code == .notFound)
        #expect(unknown?.strataCode == 140104)
        let ambiguous = await #expect(throws: StrataClientError.self) { _ = try await client.backup(to: file) }
        #expect(ambiguous?.code == .invalidArgument)
        #expect(!FileManager.default.fileExists(atPath: file.path) && !FileManager.default.fileExists(atPath: file.path + ".partial"))
        // No path of the server's in any answer.
        #expect(unknown?.message.contains(server.directory.path) == false)
        try await server.stop()
    }

    @Test func oneBackupAtATimeAndAbandonedCopiesAreRemovedAtStart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-backup-stale-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A copy a stopped server left behind (its lock file held by no one).
        let stale = directory.appendingPathComponent(".strata-backup-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: stale, withIntermediateDirectories: true)
        try Data("old".utf8).write(to: stale.appendingPathComponent("copy"))
        try Data().write(to: stale.appendingPathComponent("lock"))
        let server = try await TestServer.start(directory: directory)
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        let client = server.client()
        defer { Task { await client.close() } }
        _ = try await client.save(Wire.save(inserts: (0..<200).map { Wire.insertBook("b\($0)", title: String(repeating: "t", count: 400)) }))
        // Many at once: each either completes or is refused as busy, never both running.
        let outcomes = await withTaskGroup(of: Result<BackupResult, StrataClientError>.self) { group in
            for index in 0..<4 {
                group.addTask {
                    do {
                        return .success(try await client.backup(store: "Book", to: directory.appendingPathComponent("copy-\(index)")))
                    } catch let error as StrataClientError {
                        return .failure(error)
                    } catch {
                        return .failure(StrataClientError(.unknown, "\(error)"))
                    }
                }
            }
            var all: [Result<BackupResult, StrataClientError>] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        var made = 0
        for outcome in outcomes {
            switch outcome {
            case .success: made += 1
            case .failure(let error):
                #expect(error.code == .resourceExhausted, "\(error)")
                #expect(error.message.contains("another backup is running"))
            }
        }
        #expect(made >= 1)
        try await server.stop()
    }
}
