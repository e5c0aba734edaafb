import Foundation
import Testing

/// Runs the built `strata` against one live server (connection options
/// placed before the command, as a user would type them).
struct CLI {
    let server: LiveServer

    /// `strata --port P ARGS…`.
    func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: TimeInterval = 15) throws -> Executables.Run {
        try Executables.run("strata", ["--port", String(server.port)] + arguments, stdin: stdin, environment: Self.environment.merging(environment) { _, new in new }, timeout: timeout)
    }

    /// `strata ARGS…` without connection options.
    static func bare(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: TimeInterval = 15) throws -> Executables.Run {
        try Executables.run("strata", arguments, stdin: stdin, environment: Self.environment.merging(environment) { _, new in new }, timeout: timeout)
    }

    /// Runs and requires exit status 0; returns stdout.
    func succeed(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let run = try self.run(arguments)
        #expect(run.status == 0, "strata \(arguments.joined(separator: " ")): \(run.stderr)", sourceLocation: sourceLocation)
        return run.stdout
    }

    /// Inserts a book and returns its ID.
    func insertBook(_ title: String, uuid: String = UUID().uuidString, _ more: [String] = []) throws -> String {
        try succeed(["insert", "Book", "uuid=\(uuid)", "title=\(title)"] + more).trimmingCharacters(in: .newlines)
    }

    /// The number of requests of `operation` the server has answered.
    func requests(_ operation: String) throws -> Int {
        let stats = try CLI.object(succeed(["stats", "--json"]))
        let operations = stats["operations"] as? [[String: Any]] ?? []
        return operations.first { $0["operation"] as? String == operation }?["requests"] as? Int ?? 0
    }

    /// No inherited server settings, no colours, a private HOME.
    static let environment: [String: String] = [
        "STRATA_HOST": "", "STRATA_PORT": "", "STRATA_AUTH_TOKEN": "", "NO_COLOR": "1",
        "STRATA_TLS": "", "STRATA_TLS_CA": "", "STRATA_TLS_CERT": "", "STRATA_TLS_KEY": "",
        "HOME": FileManager.default.temporaryDirectory.path,
    ]

    /// Parses JSON text (fragments allowed).
    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// Parses a JSON object.
    static func object(_ text: String) throws -> [String: Any] {
        try #require(json(text) as? [String: Any], "not a JSON object: \(text)")
    }

    /// Parses a JSON array of objects.
    static func array(_ text: String) throws -> [[String: Any]] {
        try #require(json(text) as? [[String: Any]], "not a JSON array of objects: \(text)")
    }

    /// Whether `text` is one permanent object ID of `entity` and a newline.
    static func isObjectIDLine(_ text: String, entity: String) -> Bool {
        let line = text.hasSuffix("\n") ? String(text.dropLast()) : text
        return !line.contains("\n") && line.hasPrefix("strata://") && line.range(of: "/\(entity)/p") != nil
            && line.split(separator: "/").last.map { $0.hasPrefix("p") && Int($0.dropFirst()) != nil } == true
    }
}
