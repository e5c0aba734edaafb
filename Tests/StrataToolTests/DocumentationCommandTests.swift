import Foundation
import Testing

/// The `strata` commands the README shows run, as written, against a live
/// sample server, so that the README cannot drift from the tools.
@Suite("README commands", .timeLimit(.minutes(2)))
struct DocumentationCommandTests {
    /// The `strata …` lines of the README's `sh` blocks, comments cut;
    /// left out: commands sent to the background (`&`) and the
    /// interactive shell, which a test cannot type into.
    static func commands(in text: String) -> [String] {
        var commands: [String] = []
        var inShell = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                inShell = trimmed == "```sh"
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

    @Test("Every strata command of the README runs against the sample and exits 0")
    func readme() throws {
        let readme = try String(contentsOf: Executables.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let commands = Self.commands(in: readme)
        #expect(commands.count >= 6)
        let strata = try #require(Executables.url("strata"))
        let server = try LiveServer.start(sample: true)
        defer { server.stop() }
        for command in commands {
            let script = "strata() { \"\(strata.path)\" --port \(server.port) \"$@\"; }; uuidgen() { echo \(UUID().uuidString); }; \(command)"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script]
            process.environment = ProcessInfo.processInfo.environment.merging(CLI.environment) { _, new in new }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(command): \(String(decoding: data, as: UTF8.self))")
        }
    }
}
