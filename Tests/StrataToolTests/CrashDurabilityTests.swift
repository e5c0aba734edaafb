import Foundation
import Testing

/// `Tools/crash-test.sh`, bounded: a few rounds of writers and `kill -9`
/// on the built executables, then the check that no acknowledged save was
/// lost, duplicated or half-written and that the SQLite files are intact.
/// `STRATA_CRASH_ROUNDS` sets the rounds (default 3; the script's own
/// default, 50, is for a run by hand).
extension ToolTests {
@Suite("kill -9 durability", .serialized, .timeLimit(.minutes(5)))
struct CrashDurabilityTests {
    static var rounds: Int { Int(ProcessInfo.processInfo.environment["STRATA_CRASH_ROUNDS"] ?? "") ?? 3 }

    /// Runs the script for `store` and returns its summary line.
    static func crashTest(store: String) throws -> (status: Int32, summary: String) {
        let server = try #require(Executables.url("strata-server"), "build strata-server first (swift build)")
        _ = try #require(Executables.url("strata-crash"), "build strata-crash first (swift build)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Executables.packageRoot.appendingPathComponent("Tools/crash-test.sh").path, "--rounds", "\(rounds)", "--store", store, "--writers", "4", "--batch", "500"]
        var environment = ProcessInfo.processInfo.environment
        environment["STRATA_BIN"] = server.deletingLastPathComponent().path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let summary = text.split(separator: "\n").last { $0.hasPrefix("crash-test") }.map(String.init) ?? text
        return (process.terminationStatus, summary)
    }

    @Test("No acknowledged save is lost when the server is killed", arguments: ["sqlite", "sqlite-no-history", "binary"])
    func noAcknowledgedSaveIsLost(store: String) throws {
        let (status, summary) = try Self.crashTest(store: store)
        #expect(status == 0, "\(summary)")
        #expect(summary.contains("rounds \(Self.rounds),"), "\(summary)")
        #expect(summary.contains("lost 0, duplicated 0, partial 0"), "\(summary)")
        if store != "binary" {
            #expect(summary.contains("Books.sqlite: ok"), "\(summary)")
        }
        // The writers did write: something was acknowledged.
        let acknowledged = summary.split(separator: " ").drop { $0 != "acknowledged" }.dropFirst().first.flatMap { Int($0) } ?? 0
        #expect(acknowledged > 0, "\(summary)")
    }
}
}
