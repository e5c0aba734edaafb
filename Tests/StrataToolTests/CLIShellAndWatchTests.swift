import Foundation
import NIOConcurrencyHelpers
import Testing

/// `strata shell` fed from a pipe, and `strata watch` seeing another
/// client's change.
extension ToolTests {
@Suite("strata shell and watch", .serialized, .timeLimit(.minutes(1)))
struct CLIShellAndWatchTests {
    @Test("-f FILE runs a script; errors name their line; --stop-on-error stops at the first")
    func scriptFile() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let file = server.dataDirectory.appendingPathComponent("script.strata")
        try Data("count Book\nfetch Nope\ncount Book\n".utf8).write(to: file)
        let all = try cli.run(["shell", "-f", file.path])
        #expect(all.status == 1)
        #expect(all.stdout == "0\n0\n", "\(all.stdout)")
        #expect(all.stderr.hasPrefix("\(file.path):2: error: "), "\(all.stderr)")
        let stopped = try cli.run(["shell", "-f", file.path, "--stop-on-error"])
        #expect(stopped.status == 1)
        #expect(stopped.stdout == "0\n", "\(stopped.stdout)")
        // A refused save inside begin … save keeps its own status (3, a
        // conflict), even though the change set is left unsaved.
        let uuid = UUID().uuidString
        let conflict = try cli.run(["shell", "--stop-on-error"], stdin: "insert Book uuid=\(uuid) title=One\nbegin\ninsert Book uuid=\(uuid) title=Two\nsave\n")
        #expect(conflict.status == 3, "\(conflict.stderr)")
        // From a pipe, errors name the line too.
        let piped = try cli.run(["shell", "--stop-on-error"], stdin: "ping --json\nnonsense\nping\n")
        #expect(piped.status == 1)
        #expect(piped.stderr.hasPrefix("line 2: "), "\(piped.stderr)")
    }

    @Test("On a terminal: Tab completes commands, entities and properties; Ctrl-R searches the history, kept in $STRATA_HISTFILE (0600)")
    func terminalEditing() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            Issue.record("util-linux's script(1) is needed to give the shell a terminal")
            return
        }
        let server = try LiveServer.start(sample: true)
        defer { server.stop() }
        let strata = try #require(Executables.url("strata"))
        let history = server.dataDirectory.appendingPathComponent("history")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-q", "-c", "'\(strata.path)' -p \(server.port) shell", "/dev/null"]
        process.environment = ProcessInfo.processInfo.environment.merging(CLI.environment) { _, new in new }
            .merging(["STRATA_HISTFILE": history.path, "TERM": "xterm"]) { _, new in new }
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        let received = NIOLockedValueBox(Data())
        output.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            received.withLockedValue { $0.append(chunk) }
        }
        try process.run()
        /// Waits until the shell has written `count` prompts (it is ready
        /// for the next keys), however busy the machine is.
        func prompts(_ count: Int) {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                let text = String(decoding: received.withLockedValue { $0 }, as: UTF8.self)
                if text.components(separatedBy: "strata> ").count - 1 >= count { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        // Keys one burst at a time, as a person types them.
        let uuid = UUID().uuidString
        for (index, keys) in ["cou\tBo\t\r", "ins\tBo\tti\tTabbed uuid=\(uuid)\r", "\u{12}cou", "\r", "history\r", "\u{4}"].enumerated() {
            // Ctrl-R's search and its Enter come within one prompt.
            prompts([1, 2, 3, 3, 4, 5][index])
            Thread.sleep(forTimeInterval: 0.2)
            input.fileHandleForWriting.write(Data(keys.utf8))
        }
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { process.terminate() }
        output.fileHandleForReading.readabilityHandler = nil
        let text = String(decoding: received.withLockedValue { $0 }, as: UTF8.self)
        // count Book ran twice (typed, then found with Ctrl-R): 12, then 13.
        let lines = text.components(separatedBy: "\r\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains("12"), "\(text)")
        #expect(lines.contains("13"), "\(text)")
        let kept = try String(contentsOf: history, encoding: .utf8)
        #expect(kept.contains("count\\040Book"), "\(kept)")
        #expect(kept.contains("insert\\040Book\\040title=Tabbed"), "\(kept)")
        #expect((try FileManager.default.attributesOfItem(atPath: history.path)[.posixPermissions] as? Int) == 0o600)
        let count = try CLI(server: server).succeed(["count", "Book", "--where", "title == 'Tabbed'"])
        #expect(count == "1\n")
    }

    @Test("The shell reads commands from a pipe; begin … save sends one change set")
    func shellFromPipe() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let script = """
            # counting first
            count Book
            begin
            insert Book uuid=\(UUID().uuidString) title="Two Words"
            insert Book uuid=\(UUID().uuidString) title='Second'
            update new-1 pages=10
            save
            count Book

            begin
            insert Book uuid=\(UUID().uuidString) title=Dropped
            rollback
            count Book --where "title == 'Two Words' AND pages == 10"
            ping --json
            """
        let run = try cli.run(["shell"], stdin: script + "\n")
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count >= 9, "\(run.stdout)")
        guard lines.count >= 9 else { return }
        #expect(lines[0] == "0")
        #expect(lines[1] == "new-1")
        #expect(lines[2] == "new-2")
        #expect(lines[3].hasPrefix("inserted new-1 strata://") && lines[3].contains("/Book/p"))
        #expect(lines[4].hasPrefix("inserted new-2 strata://"))
        #expect(lines[5] == "2")
        #expect(lines[6] == "new-1")
        #expect(lines[7] == "1")
        let ping = try CLI.object(lines[8...].joined(separator: "\n"))
        #expect(ping["model"] as? String == "BooksAndFeedback")
        #expect(run.stderr.contains("rolled back 1 change"))
        // Two inserts and an update went to the server as one save.
        #expect(try cli.requests("save") == 1)
        #expect(try cli.succeed(["count", "Book"]) == "2\n")
    }

    @Test("The shell keeps going after errors and exits with the last failure's status")
    func shellErrors() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let id = try cli.insertBook("Here")
        #expect(try cli.succeed(["delete", id]) == id + "\n")
        let run = try cli.run(["shell"], stdin: """
            insert Book title=x pages=abc
            refresh \(id)
            count Book
            save
            fetch Book --json

            """)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("Book.pages"))
        #expect(run.stderr.contains("NOT_FOUND"))
        #expect(run.stderr.contains("save without begin"))
        let lines = run.stdout.split(separator: "\n", maxSplits: 1).map(String.init)
        #expect(lines.first == "0")
        #expect(try CLI.json(lines.dropFirst().joined()) as? [Any] != nil)

        let notFound = try cli.run(["shell"], stdin: "refresh \(id)\n")
        #expect(notFound.status == 4)

        // Input ending inside begin … save drops the changes and fails.
        let unsaved = try cli.run(["shell"], stdin: "begin\ninsert Book uuid=\(UUID().uuidString) title=Lost\n")
        #expect(unsaved.status == 1)
        #expect(unsaved.stderr.contains("unsaved"))
        #expect(try cli.succeed(["count", "Book"]) == "0\n")

        // A failed save keeps the change set open for a rollback.
        let uuid = UUID().uuidString
        _ = try cli.insertBook("Taken", uuid: uuid)
        let conflict = try cli.run(["shell"], stdin: "begin\ninsert Book uuid=\(uuid) title=Again\nsave\nrollback\ncount Book\n")
        #expect(conflict.status == 3, "\(conflict.stderr)")
        #expect(conflict.stderr.contains("ALREADY_EXISTS"))
        #expect(conflict.stdout.hasSuffix("1\n"))
    }

    @Test("watch --count 1 --json sees an insert made by another strata process")
    func watchSeesAnotherClient() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let executable = try #require(Executables.url("strata"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("stdout"), err = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let watch = Process()
        watch.executableURL = executable
        watch.arguments = ["watch", "Book", "--count", "1", "--json", "--port", String(server.port)]
        watch.environment = ProcessInfo.processInfo.environment.merging(CLI.environment) { _, new in new }
        watch.standardOutput = try FileHandle(forWritingTo: out)
        watch.standardError = try FileHandle(forWritingTo: err)
        try watch.run()
        defer { if watch.isRunning { watch.terminate() } }

        // Wait until it has subscribed (it says so on stderr).
        let subscribed = Date().addingTimeInterval(10)
        while Date() < subscribed, watch.isRunning, !((try? String(contentsOf: err, encoding: .utf8)) ?? "").contains("watching") {
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(((try? String(contentsOf: err, encoding: .utf8)) ?? "").contains("watching Book"))

        // A change to another entity is not reported; the book is.
        _ = try cli.succeed(["insert", "Feedback", "bookUUID=\(UUID().uuidString)", "rating=2"])
        let id = try cli.insertBook("Watched")
        let finished = Date().addingTimeInterval(10)
        while watch.isRunning, Date() < finished { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!watch.isRunning, "watch did not stop after one notification")
        guard !watch.isRunning else { return }
        #expect(watch.terminationStatus == 0)
        let output = try String(contentsOf: out, encoding: .utf8)
        let lines = output.split(separator: "\n")
        #expect(lines.count == 1, "\(output)")
        let notification = try CLI.object(String(lines.first ?? ""))
        let inserted = try #require(notification["inserted"] as? [[String: Any]])
        #expect(inserted.first?["id"] as? String == id)
        #expect(inserted.first?["entity"] as? String == "Book")
        #expect(inserted.first?["version"] as? Int == 1)
        #expect(notification["origin"] as? String == "strata")
    }

    @Test("watch ends with exit 2 when the server goes away")
    func watchConnectionLost() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let executable = try #require(Executables.url("strata"))
        let errors = Pipe()
        let watch = Process()
        watch.executableURL = executable
        watch.arguments = ["--port", String(server.port), "watch", "Book"]
        watch.environment = ProcessInfo.processInfo.environment.merging(CLI.environment) { _, new in new }
        watch.standardOutput = FileHandle.nullDevice
        watch.standardError = errors
        try watch.run()
        defer { if watch.isRunning { watch.terminate() } }
        _ = errors.fileHandleForReading.availableData
        kill(server.process.processIdentifier, SIGKILL)
        let finished = Date().addingTimeInterval(12)
        while watch.isRunning, Date() < finished { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!watch.isRunning)
        guard !watch.isRunning else { return }
        #expect(watch.terminationStatus == 2)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("UNAVAILABLE"), "\(message)")
    }

    @Test("watch without --json prints one line per notification")
    func watchText() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let id = try cli.insertBook("Before")
        let executable = try #require(Executables.url("strata"))
        let pipe = Pipe()
        let errors = Pipe()
        let watch = Process()
        watch.executableURL = executable
        watch.arguments = ["--port", String(server.port), "watch", "--count", "2"]
        watch.environment = ProcessInfo.processInfo.environment.merging(CLI.environment) { _, new in new }
        watch.standardOutput = pipe
        watch.standardError = errors
        try watch.run()
        defer { if watch.isRunning { watch.terminate() } }
        // The first stderr bytes arrive once subscribed.
        _ = errors.fileHandleForReading.availableData
        _ = try cli.succeed(["update", id, "pages=7"])
        _ = try cli.succeed(["delete", id])
        let finished = Date().addingTimeInterval(10)
        while watch.isRunning, Date() < finished { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!watch.isRunning)
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(output)")
        #expect(lines.first?.contains("updated \(id) (v2: pages)") == true, "\(output)")
        #expect(lines.last?.contains("deleted \(id)") == true, "\(output)")
    }
}
}
