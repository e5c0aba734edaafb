import Foundation
import Testing

/// Runs the built `strata` executable (`swift build` makes it before the
/// tests run) and reads `strata model inspect --json` output.
enum StrataTool {
    /// The outcome of one run.
    struct Run {
        /// The exit status.
        var status: Int32
        /// Everything written to standard output.
        var stdout: String
        /// Everything written to standard error.
        var stderr: String
    }

    /// `strata` next to the test bundle, else in `<root>/.build/debug`.
    static let executable: URL? = {
        var candidates: [URL] = []
        if let bundle = Bundle.main.executableURL {
            candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("strata"))
        }
        if let argument = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: argument).deletingLastPathComponent().appendingPathComponent("strata"))
        }
        candidates.append(ModelFiles.packageRoot.appendingPathComponent(".build/debug/strata"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Runs `strata` with the arguments and waits for it to exit.
    static func run(_ arguments: [String]) throws -> Run {
        let binary = try #require(Self.executable, "build the strata executable first (swift build)")
        let folder = try ModelFiles.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("stdout"), err = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: out), errHandle = try FileHandle(forWritingTo: err)
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = outHandle
        process.standardError = errHandle
        try process.run()
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        return Run(
            status: process.terminationStatus,
            stdout: try String(contentsOf: out, encoding: .utf8),
            stderr: try String(contentsOf: err, encoding: .utf8)
        )
    }

    /// Parses `inspect --json` output as a dictionary.
    static func json(_ run: Run) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    /// Keeps only the documented keys of `inspect --json`, recursively;
    /// every documented key must be present (null included).
    static func project(_ json: Any) throws -> [String: Any] {
        let root = try #require(json as? [String: Any])
        func pick(_ object: Any?, _ keys: [String]) throws -> [String: Any] {
            let dictionary = try #require(object as? [String: Any])
            var result: [String: Any] = [:]
            for key in keys {
                let value = try #require(dictionary[key], "missing key '\(key)'")
                result[key] = value
            }
            return result
        }
        let entityList = try #require(root["entities"] as? [Any])
        let entities = try entityList.map { entity -> [String: Any] in
            var projected = try pick(entity, ["name", "parent", "abstract"])
            let dictionary = try #require(entity as? [String: Any])
            let attributes = try #require(dictionary["attributes"] as? [Any])
            let relationships = try #require(dictionary["relationships"] as? [Any])
            let fetchedProperties = try #require(dictionary["fetchedProperties"] as? [Any])
            projected["attributes"] = try attributes.map { try pick($0, ["name", "type", "optional", "transient", "derived"]) }
            projected["relationships"] = try relationships.map {
                try pick($0, ["name", "destination", "toMany", "ordered", "inverse", "deleteRule"])
            }
            projected["fetchedProperties"] = try fetchedProperties.map { try pick($0, ["name", "entity", "predicate"]) }
            return projected
        }
        let configurationList = try #require(root["configurations"] as? [Any])
        let configurations = try configurationList.map { try pick($0, ["name", "entities"]) }
        return ["entities": entities, "configurations": configurations]
    }

    /// Pretty, key-sorted JSON text, for comparing two JSON values.
    static func canonical(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]), as: UTF8.self)
    }

    /// Checks that `inspect --json` of the model file at `path` matches an
    /// independent line scan of `contentsFile` (the file itself, or the
    /// version a model folder resolves to), and that a second run prints
    /// the same bytes.
    static func expectInspectMatchesScan(of path: String, contentsFile: URL) throws {
        let run = try Self.run(["model", "inspect", path, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty)
        let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8), options: [.fragmentsAllowed])
        let expected = ContentsScanner(text: try String(contentsOf: contentsFile, encoding: .utf8)).expectedInspectJSON
        #expect(try canonical(project(json)) == canonical(expected))
        #expect(try Self.run(["model", "inspect", path, "--json"]).stdout == run.stdout)
    }
}
