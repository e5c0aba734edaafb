import Foundation
import Testing

/// The `strata` commands the README and the pages under `docs/` show run,
/// as written, against a live sample server (a fresh one per page), so
/// that the documents cannot drift from the tools.
///
/// What runs: every line starting with `strata ` in a fenced `sh` block,
/// in order, comments cut. What does not: a line sent to the background
/// (`&`, it waits for something), the interactive `strata shell`, and every
/// block preceded by an HTML comment `<!-- not run: REASON -->` (commands
/// for another setup: a TLS server, several servers). Placeholders: `…` in
/// an object ID (`strata://…/Book/p1`) stands for the identifier of the
/// store, filled in by the test; the default port 7420 stands for the test
/// server's port; `$(uuidgen)` gives a new UUID.
extension ToolTests {
@Suite("Documented commands", .serialized, .timeLimit(.minutes(3)))
struct DocumentationCommandTests {
    /// The commands of one document (see the suite's rules).
    static func commands(in text: String) -> [String] {
        var commands: [String] = []
        var inShell = false, skipNext = false, skipping = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("<!-- not run:") {
                skipNext = true
                continue
            }
            if trimmed.hasPrefix("```") {
                if inShell || skipping {
                    inShell = false
                    skipping = false
                } else {
                    // The marker applies to the block right after it, of any kind.
                    if trimmed == "```sh" { if skipNext { skipping = true } else { inShell = true } }
                    skipNext = false
                }
                continue
            }
            guard inShell, trimmed.hasPrefix("strata ") else { continue }
            var command = trimmed
            if let comment = command.range(of: " #") { command = String(command[..<comment.lowerBound]).trimmingCharacters(in: .whitespaces) }
            if command.hasSuffix("&") || command.hasPrefix("strata shell") { continue }
            commands.append(command)
        }
        return commands
    }

    /// The README and every page under docs/.
    static let documents: [String] = {
        let docs = Executables.packageRoot.appendingPathComponent("docs")
        let pages = ((try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []).filter { $0.hasSuffix(".md") }.sorted()
        return ["README.md"] + pages.map { "docs/\($0)" }
    }()

    @Test("The extraction follows the rules")
    func extraction() {
        let text = """
            ```sh
            strata ping   # a comment
            strata watch Book &
            strata shell
            swift run strata-server
            ```
            <!-- not run: another server -->
            ```sh
            strata --port 7421 ping
            ```
            <!-- not run: text -->
            ```text
            strata not a command
            ```
            ```text
            strata not a command
            ```
            ```sh
            strata count Book
            ```
            """
        #expect(Self.commands(in: text) == ["strata ping", "strata count Book"])
    }

    @Test("Every documented strata command runs against the sample and exits 0", arguments: documents)
    func document(_ path: String) throws {
        let text = try String(contentsOf: Executables.packageRoot.appendingPathComponent(path), encoding: .utf8)
        let commands = Self.commands(in: text)
        if path == "README.md" { #expect(commands.count >= 6) }
        guard !commands.isEmpty else { return }
        let strata = try #require(Executables.url("strata"))
        let server = try LiveServer.start(sample: true)
        defer { server.stop() }
        // The sample's Book store, for object IDs written strata://…/Book/p1.
        let stats = try CLI.object(CLI(server: server).succeed(["stats", "--json"]))
        let stores = stats["stores"] as? [[String: Any]] ?? []
        let books = try #require(stores.first { $0["configuration"] as? String == "Book" }?["storeID"] as? String)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-docs-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for command in commands {
            let filled = command.replacingOccurrences(of: "strata://…/", with: "strata://\(books)/")
                .replacingOccurrences(of: "7420", with: "\(server.port)")
            let script = "strata() { \"\(strata.path)\" --port \(server.port) \"$@\"; }; uuidgen() { cat /proc/sys/kernel/random/uuid; }; \(filled)"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script]
            process.currentDirectoryURL = folder
            process.environment = ProcessInfo.processInfo.environment.merging(CLI.environment) { _, new in new }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(path): \(command): \(String(decoding: data, as: UTF8.self))")
        }
    }
}
}
