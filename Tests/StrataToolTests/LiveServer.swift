import Foundation
import Testing

/// A `strata-server` process on 127.0.0.1 (a free port, a fresh data
/// directory), for tests that run the built executables.
final class LiveServer {
    let process: Process
    let port: Int
    let dataDirectory: URL
    let logFile: URL

    private init(process: Process, port: Int, dataDirectory: URL, logFile: URL) {
        self.process = process
        self.port = port
        self.dataDirectory = dataDirectory
        self.logFile = logFile
    }

    /// Starts the server and waits (up to 20 s) for its "serving" log line.
    /// Its stores go to `dataDirectory` when given (servers started with the
    /// same one share their store files), else to a fresh directory.
    /// With `descriptorLimit`, the server runs with that limit on open
    /// file descriptors, soft and hard (`ulimit -n`).
    static func start(_ arguments: [String] = [], dataDirectory shared: URL? = nil, descriptorLimit: Int? = nil, sample: Bool = false) throws -> LiveServer {
        let executable = try #require(Executables.url("strata-server"), "build strata-server first (swift build)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-live-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let logFile = directory.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let process = Process()
        // Empty stores unless the test wants the sample's books.
        let serverArguments = ["--port", "0", "--data-dir", (shared ?? directory.appendingPathComponent("data")).path] + (sample ? [] : ["--empty"]) + arguments
        if let descriptorLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", executable.path] + serverArguments
        } else {
            process.executableURL = executable
            process.arguments = serverArguments
        }
        process.standardOutput = try FileHandle(forWritingTo: logFile)
        process.standardError = try FileHandle(forWritingTo: logFile)
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            if let port = Self.port(in: log) {
                return LiveServer(process: process, port: port, dataDirectory: directory, logFile: logFile)
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.terminate()
        let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        throw LiveServerError(message: "strata-server did not start: \(log)")
    }

    /// The port in `strata-server serving model '…' on 127.0.0.1:PORT`.
    static func port(in log: String) -> Int? {
        guard let range = log.range(of: "on 127.0.0.1:") else { return nil }
        let digits = log[range.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }

    /// The server's log so far.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Stops the server with SIGTERM (graceful), waiting up to 15 s.
    func stop(removingFiles: Bool = true) {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(15)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        if removingFiles { try? FileManager.default.removeItem(at: dataDirectory) }
    }
}

/// Why a live server could not start.
struct LiveServerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Finding and running the package's built executables.
enum Executables {
    /// The package root (three levels above this file).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// An executable next to the test bundle, else in `.build/debug`.
    static func url(_ name: String) -> URL? {
        var candidates: [URL] = []
        if let bundle = Bundle.main.executableURL {
            candidates.append(bundle.deletingLastPathComponent().appendingPathComponent(name))
        }
        if let argument = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: argument).deletingLastPathComponent().appendingPathComponent(name))
        }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/\(name)"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The outcome of one run.
    struct Run: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs an executable to completion (killed after `timeout`), feeding
    /// `stdin` when given, and captures its output.
    static func run(_ name: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: TimeInterval = 30) throws -> Run {
        let executable = try #require(url(name), "build \(name) first (swift build)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-run-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("stdout"), err = folder.appendingPathComponent("stderr"), input = folder.appendingPathComponent("stdin")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        _ = FileManager.default.createFile(atPath: input.path, contents: Data((stdin ?? "").utf8))
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = try FileHandle(forReadingFrom: input)
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        return Run(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        )
    }
}

extension ToolTests {
@Suite("strata-server executable", .timeLimit(.minutes(1)))
struct ServerExecutableTests {
    @Test("Starts on the bundled sample, says so in one line, stops cleanly on SIGTERM")
    func startsAndStops() throws {
        let server = try LiveServer.start()
        let log = server.log
        #expect(log.contains("serving model 'BooksAndFeedback'"))
        #expect(log.components(separatedBy: "serving model").count == 2)
        server.stop(removingFiles: false)
        #expect(server.process.terminationStatus == 0)
        #expect(server.log.contains("stores closed"))
        let files = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory.appendingPathComponent("data").path)
        #expect(files.contains("Books.sqlite"))
        #expect(files.contains("Feedback.sqlite"))
        try? FileManager.default.removeItem(at: server.dataDirectory)
    }

    /// Runs strata-bench's books workload against `server` and expects
    /// every request answered.
    private static func runBooks(on server: LiveServer, connections: Int, requests: Int, mix: String) throws {
        let run = try Executables.run("strata-bench", ["--workload", "books", "--port", "\(server.port)", "-c", "\(connections)", "-n", "\(requests)",
                                                       "--dataset", "20", "--mix", mix, "--json"], timeout: 30)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("\"ok\" : \(requests)"), "\(run.stdout)")
    }

    @Test("Creates its SQLite stores with --page-size, and serves them")
    func pageSize() throws {
        let server = try LiveServer.start(["--page-size", "1024"])
        defer { server.stop() }
        try Self.runBooks(on: server, connections: 4, requests: 100, mix: "get=50,insert=50")
        // The page size is the big-endian 16-bit number at byte 16 of a
        // SQLite file's header.
        for name in ["Books.sqlite", "Feedback.sqlite"] {
            let file = try FileHandle(forReadingFrom: server.dataDirectory.appendingPathComponent("data").appendingPathComponent(name))
            defer { try? file.close() }
            let header = try #require(try file.read(upToCount: 18))
            #expect(header.count == 18 && Int(header[16]) << 8 | Int(header[17]) == 1024, "\(name)")
        }
    }

    @Test("Serves on the event-loop threads it is given")
    func eventLoopThreads() throws {
        let server = try LiveServer.start(["--event-loop-threads", "1"])
        defer { server.stop() }
        try Self.runBooks(on: server, connections: 8, requests: 200, mix: "get=80,insert=20")
        server.stop(removingFiles: false)
        #expect(server.process.terminationStatus == 0)
        #expect(server.log.contains("stores closed"))
    }

    @Test("Refuses a bad --store option with a usage error")
    func badStoreOption() throws {
        let run = try Executables.run("strata-server", ["--store", "Book=postgres:/x", "--port", "0"], timeout: 10)
        #expect(run.status != 0)
        #expect(run.stderr.contains("--store"))
    }

    @Test("A --store value it cannot use is refused without being repeated (a mistyped prefix may leave a password in it)", arguments: [
        "Book=postgresql://strata:Secret1@127.0.0.1:5432/db",
        "Book=postgres+ro:postgresql://strata:Secret1@127.0.0.1/db",
        "postgresql://strata:Secret1@127.0.0.1/db",
        "=sqlite:Secret1.sqlite",
        "Book=postgres:postgresql://strata:Secret1@127.0.0.1/db",
        "Book=postgres:postgresql://user@127.0.0.1/Secret1?nonsense=1",
        "Book=postgres:mysql://user@127.0.0.1/Secret1",
        "Book=postgres+readonly:",
    ])
    func storeValuesAreNotRepeated(value: String) throws {
        let run = try Executables.run("strata-server", ["--store", value, "--port", "0"], timeout: 10)
        #expect(run.status != 0)
        #expect(run.stderr.contains("--store"), "\(run.stderr)")
        #expect(!run.stderr.contains("Secret1"), "\(run.stderr)")
    }

    @Test("Two configurations in one PostgreSQL schema are refused before anything is opened")
    func oneSchemaPerConfiguration() throws {
        let run = try Executables.run("strata-server", [
            "--store", "Book=postgres:postgresql://strata@127.0.0.1:1/db?schema=shared",
            "--store", "Feedback=postgres:postgresql://strata@127.0.0.1:1/db?schema=shared", "--port", "0",
        ], timeout: 10)
        #expect(run.status != 0)
        #expect(run.stderr.contains("a schema of its own"), "\(run.stderr)")
    }

    @Test("Refuses out-of-range intervals, timeouts and sizes with the option's name instead of trapping", arguments: [
        ["--history-retention", "9999999999999999"],
        ["--history-retention", "0"],
        ["--history-purge-interval", "-1"],
        ["--history-poll", "600000"],
        ["--busy-timeout", "0"],
        ["--sqlite-cache-mb", "-5"],
        ["--wal-checkpoint-mb", "0"],
        ["--page-size", "1000"],
        ["--page-size", "131072"],
        ["--max-frame-bytes", "8589934592"],
        ["--idle-timeout", "9999999999"],
        ["--event-loop-threads", "-1"],
        ["--event-loop-threads", "5000"],
    ])
    func outOfRangeOptions(option: [String]) throws {
        let run = try Executables.run("strata-server", option + ["--port", "0"], timeout: 10)
        #expect(run.status != 0, "\(option) was accepted")
        #expect(run.stderr.contains(option[0]), "\(run.stderr)")
        #expect(!run.stderr.contains("Fatal error"), "\(run.stderr)")
    }
}
}
