import Foundation
import Testing

/// `strata-server`'s options from `STRATA_SERVER_*` variables.
extension ToolTests {
@Suite("Server options from the environment", .serialized, .timeLimit(.minutes(2)))
struct EnvironmentOptionTests {
    /// Starts `strata-server ARGS` with `environment` added and returns its
    /// port and log once it serves; stops it after `body`.
    static func serve(_ arguments: [String], environment: [String: String], _ body: (Int, () -> String) throws -> Void) throws {
        let executable = try #require(Executables.url("strata-server"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-env-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let logFile = folder.appendingPathComponent("log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STRATA_") }.merging(environment) { _, new in new }
        process.standardOutput = try FileHandle(forWritingTo: logFile)
        process.standardError = try FileHandle(forWritingTo: logFile)
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let log = { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, process.isRunning, LiveServer.port(in: log()) == nil { Thread.sleep(forTimeInterval: 0.05) }
        let port = try #require(LiveServer.port(in: log()), "\(log())")
        try body(port, log)
    }

    @Test("Variables give options; the command line wins; repeated --store values are separated by ';'")
    func variablesGiveOptions() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("strata-env-data-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: data) }
        try Self.serve([], environment: [
            "STRATA_SERVER_PORT": "0", "STRATA_SERVER_DATA_DIR": data.path, "STRATA_SERVER_EMPTY": "yes",
            "STRATA_SERVER_LOG_FORMAT": "json", "STRATA_SERVER_ROW_CACHE": "",
        ]) { port, log in
            #expect(log().hasPrefix("{"), "JSON log lines: \(log())")
            let count = try Executables.run("strata", ["--port", "\(port)", "count", "Book"])
            #expect(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "--empty from STRATA_SERVER_EMPTY")
        }
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("Books.sqlite").path))

        // The command line's --data-dir wins over the variable's.
        let other = FileManager.default.temporaryDirectory.appendingPathComponent("strata-env-cli-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: other) }
        try Self.serve(["--data-dir", other.path], environment: [
            "STRATA_SERVER_PORT": "0", "STRATA_SERVER_DATA_DIR": "/nonexistent/never",
            "STRATA_SERVER_STORE": "Book=memory;Feedback=sqlite:fb.sqlite",
        ]) { port, _ in
            let stats = try Executables.run("strata", ["--port", "\(port)", "stats", "--json"])
            let stores = try CLI.object(stats.stdout)["stores"] as? [[String: Any]] ?? []
            #expect(stores.first { $0["configuration"] as? String == "Book" }?["type"] as? String == "memory", "\(stats.stdout)")
        }
        #expect(FileManager.default.fileExists(atPath: other.appendingPathComponent("fb.sqlite").path))
        #expect(!FileManager.default.fileExists(atPath: other.appendingPathComponent("Books.sqlite").path))
    }

    @Test("A bad flag value or a misspelt variable is refused, naming it")
    func refusals() throws {
        let flag = try Executables.run("strata-server", [], environment: ["STRATA_SERVER_EMPTY": "maybe"], timeout: 10)
        #expect(flag.status == 1)
        #expect(flag.stderr.contains("STRATA_SERVER_EMPTY=maybe"), "\(flag.stderr)")
        let typo = try Executables.run("strata-server", [], environment: ["STRATA_SERVER_DATADIR": "/tmp"], timeout: 10)
        #expect(typo.status == 1)
        #expect(typo.stderr.contains("STRATA_SERVER_DATADIR"), "\(typo.stderr)")
        // A variable with a bad value fails as the option would.
        let port = try Executables.run("strata-server", [], environment: ["STRATA_SERVER_PORT": "70000"], timeout: 10)
        #expect(port.status != 0)
        #expect(port.stderr.contains("--port"), "\(port.stderr)")
    }

    @Test("Every option of strata-server has its variable, documented")
    func everyOptionHasItsVariable() throws {
        let dump = try Executables.run("strata-server", ["--experimental-dump-help"], timeout: 10)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let command = try #require(json["command"] as? [String: Any])
        let arguments = try #require(command["arguments"] as? [[String: Any]])
        var names: [(name: String, flag: Bool)] = []
        for argument in arguments {
            guard let kind = argument["kind"] as? String, kind == "option" || kind == "flag",
                  let long = (argument["names"] as? [[String: Any]])?.first(where: { $0["kind"] as? String == "long" })?["name"] as? String else { continue }
            if ["help", "version", "auth-token"].contains(long) { continue }
            names.append((long, kind == "flag"))
        }
        #expect(names.count >= 35)
        let documentation = try String(contentsOf: Executables.packageRoot.appendingPathComponent("docs/server.md"), encoding: .utf8)
        for (name, flag) in names {
            let variable = "STRATA_SERVER_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
            // A variable the server does not know is refused; one it
            // reads becomes its option: --version runs, or the value 'x'
            // is refused naming the option.
            let run = try Executables.run("strata-server", ["--version"], environment: [variable: flag ? "1" : "x"], timeout: 10)
            #expect(!run.stderr.contains("unknown environment variable"), "\(variable): \(run.stderr)")
            #expect(run.status == 0 || run.stderr.contains("--\(name)"), "\(variable): \(run.stderr)")
            #expect(documentation.contains("`\(variable)`"), "\(variable) is not in docs/server.md")
        }
    }
}
}
