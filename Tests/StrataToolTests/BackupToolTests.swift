import Foundation
import Testing

/// `strata backup` and `strata-server restore`, run as an operator would:
/// a copy of the sample's books while the server runs, a second server
/// serving the copy read-only, and the copy restored over later changes.
extension ToolTests {
@Suite("Backup and restore", .serialized, .timeLimit(.minutes(3)))
struct BackupToolTests {
    @Test func backUpServeReadOnlyAndRestore() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("strata-backup-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: data) }
        let file = data.appendingPathComponent("books.backup").path
        let storeFile = data.appendingPathComponent("Books.sqlite").path

        let server = try LiveServer.start(dataDirectory: data, sample: true)
        var cli = CLI(server: server)
        let sampleCount = try cli.succeed(["count", "Book"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(sampleCount == "12")
        let backup = try cli.run(["backup", "--store", "Book", file])
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stdout.hasPrefix("\(file): ") && backup.stdout.contains("bytes, sqlite store"))
        // Never over an existing file unless asked.
        let first = try Data(contentsOf: URL(fileURLWithPath: file))
        let again = try cli.run(["backup", "--store", "Book", file])
        #expect(again.status == 1)
        #expect(again.stderr.contains("--force"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == first)
        // --force replaces it with a copy of the store as it is now.
        _ = try cli.insertBook("In the second backup only")
        #expect(try cli.run(["backup", "--store", "Book", "--force", file]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) != first)
        try first.write(to: URL(fileURLWithPath: file))
        _ = try cli.insertBook("After the backup")

        // A server serves the copy read-only.
        let reader = try LiveServer.start(["--store", "Book=sqlite:\(file)?readonly", "--store", "Feedback=memory"])
        let readerCLI = CLI(server: reader)
        #expect(try readerCLI.succeed(["count", "Book"]).trimmingCharacters(in: .whitespacesAndNewlines) == "12")
        #expect(try readerCLI.run(["insert", "Book", "uuid=\(UUID().uuidString)", "title=Refused"]).status != 0)
        reader.stop()

        // Restoring under a running server is refused, and changes nothing.
        let busy = try Executables.run("strata-server", ["restore", file, "--to", storeFile])
        #expect(busy.status == 1)
        #expect(busy.stderr.contains("open in another process"))
        #expect(try cli.succeed(["count", "Book"]).trimmingCharacters(in: .whitespacesAndNewlines) == "14")
        let lastID = try cli.succeed(["fetch", "Book", "--where", "title == 'After the backup'", "--json"])
        server.stop(removingFiles: false)

        let restore = try Executables.run("strata-server", ["restore", file, "--to", storeFile])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(restore.stdout.contains("restored \(storeFile)"))
        #expect(restore.stdout.contains("kept the previous file as \(storeFile).replaced-"))
        let restarted = try LiveServer.start(dataDirectory: data, sample: true)
        defer { restarted.stop(removingFiles: false) }
        cli = CLI(server: restarted)
        #expect(try cli.succeed(["count", "Book"]).trimmingCharacters(in: .whitespacesAndNewlines) == "12")
        #expect(try cli.succeed(["count", "Book", "--where", "title == 'After the backup'"]).trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        // Keys handed out after the backup are not handed out again.
        let newID = try cli.insertBook("After the restore")
        #expect(!lastID.contains(newID), "\(newID) was handed out before the restore")
        #expect(newID.hasSuffix("/Book/p15"), "\(newID)")
        // A backup of another store is refused unless forced.
        let feedback = data.appendingPathComponent("feedback.backup").path
        #expect(try cli.run(["backup", "--store", "Feedback", feedback]).status == 0)
        restarted.stop(removingFiles: false)
        let other = try Executables.run("strata-server", ["restore", feedback, "--to", storeFile])
        #expect(other.status == 1)
        #expect(other.stderr.contains("is a backup of store"), "\(other.stderr)")
        // To a path with no store (a lost disk, or a typo): it says so.
        let fresh = data.appendingPathComponent("elsewhere/Feedback.sqlite").path
        try FileManager.default.createDirectory(atPath: data.appendingPathComponent("elsewhere").path, withIntermediateDirectories: true)
        let created = try Executables.run("strata-server", ["restore", feedback, "--to", fresh])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("there was no store file at \(fresh)"), "\(created.stdout)")
    }
}
}
