import Foundation
import Testing
@testable import StrataModel

/// Runs the built `strata` executable (`swift build` makes it before the
/// tests run) and checks its output and exit status.
@Suite struct ModelCommandTests {
    /// The outcome of one run.
    private struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// `strata` next to the test bundle, else in `<root>/.build/debug`.
    private static let executable: URL? = {
        var candidates: [URL] = []
        if let bundle = Bundle.main.executableURL {
            candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("strata"))
        }
        if let argument = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: argument).deletingLastPathComponent().appendingPathComponent("strata"))
        }
        candidates.append(ReferenceModels.packageRoot.appendingPathComponent(".build/debug/strata"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    private func strata(_ arguments: String...) throws -> Run {
        let executable = try #require(Self.executable, "build the strata executable first (swift build)")
        let folder = try ReferenceModels.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("stdout"), err = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: out), errHandle = try FileHandle(forWritingTo: err)
        let process = Process()
        process.executableURL = executable
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

    /// Keeps only the documented keys of `inspect --json`, recursively.
    private func project(_ json: Any) throws -> [String: Any] {
        let root = try #require(json as? [String: Any])
        func pick(_ object: Any?, _ keys: [String]) throws -> [String: Any] {
            let dictionary = try #require(object as? [String: Any])
            var result: [String: Any] = [:]
            for key in keys {
                // Every documented key is present, null included.
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

    private func canonical(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]), as: UTF8.self)
    }

    @Test(arguments: ReferenceModels.names)
    func inspectJSONMatchesAnIndependentReading(name: String) throws {
        let url = ReferenceModels.url(name)
        let run = try strata("model", "inspect", url.path, "--json")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty)
        let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8), options: [.fragmentsAllowed])
        let expected = ContentsScanner(text: try String(contentsOf: url, encoding: .utf8)).expectedInspectJSON
        #expect(try canonical(project(json)) == canonical(expected))
        // Stable output: a second run prints the same bytes.
        #expect(try strata("model", "inspect", url.path, "--json").stdout == run.stdout)
    }

    @Test func inspectJSONSpotChecks() throws {
        let run = try strata("model", "inspect", ReferenceModels.url("SwiftGen_SwiftGen").path, "--json")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let entities = try #require(root["entities"] as? [[String: Any]])
        let main = try #require(entities.first { $0["name"] as? String == "MainEntity" })
        #expect(main["parent"] is NSNull)
        let attributes = try #require(main["attributes"] as? [[String: Any]])
        let int16 = try #require(attributes.first { $0["name"] as? String == "int16" })
        #expect(int16["type"] as? String == "Integer 16")
        #expect(int16["optional"] as? Bool == false)
        let relationships = try #require(main["relationships"] as? [[String: Any]])
        #expect(relationships.map { $0["deleteRule"] as? String } == ["Nullify", "Nullify", "Nullify"])
        #expect(relationships.map { $0["toMany"] as? Bool } == [true, true, false])
        let child = try #require(entities.first { $0["name"] as? String == "ChildEntity" })
        #expect(child["parent"] as? String == "MainEntity")
        #expect((child["attributes"] as? [[String: Any]])?.count == 3)   // own attributes only

        let mogenerator = try strata("model", "inspect", ReferenceModels.url("rentzsch_mogenerator").path, "--json")
        let moRoot = try #require(try JSONSerialization.jsonObject(with: Data(mogenerator.stdout.utf8)) as? [String: Any])
        #expect((moRoot["configurations"] as? [Any])?.isEmpty == true)
        let parent = try #require((moRoot["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Parent" })
        let children = try #require((parent["relationships"] as? [[String: Any]])?.first)
        #expect(children["inverse"] is NSNull)
        #expect(children["deleteRule"] as? String == "Cascade")
    }

    @Test func inspectPrintsAReadableTree() throws {
        let run = try strata("model", "inspect", ReferenceModels.url("rentzsch_mogenerator").path)
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("Model rentzsch_mogenerator"))
        #expect(run.stdout.contains("\nHuman  class HumanMO\n"))
        #expect(run.stdout.contains("\nParent : Human  class ParentMO\n"))
        #expect(run.stdout.contains("  age: Integer 16  default 0, min 0\n"))
        #expect(run.stdout.contains("  orderedChildren -> [Child]  ordered, inverse parent, Cascade\n"))
        #expect(run.stdout.contains("  byHumanName: Human where humanName == $humanName\n"))
    }

    @Test func inspectAcceptsModelFolders() throws {
        let folder = try ReferenceModels.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = try String(contentsOf: ReferenceModels.url("atomicbird_momcom"), encoding: .utf8)
        try ReferenceModels.write(text, to: "momcTests.xcdatamodeld/momcTests 2.xcdatamodel/contents", in: folder)
        try ReferenceModels.write(ReferenceModels.document("<entity name=\"Old\"/>"),
                                  to: "momcTests.xcdatamodeld/momcTests.xcdatamodel/contents", in: folder)
        try ReferenceModels.write("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>momcTests 2.xcdatamodel</string></dict></plist>
            """, to: "momcTests.xcdatamodeld/.xccurrentversion", in: folder)
        let run = try strata("model", "inspect", folder.appendingPathComponent("momcTests.xcdatamodeld").path, "--json")
        #expect(run.status == 0)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(root["name"] as? String == "momcTests 2")
        #expect((root["entities"] as? [[String: Any]])?.map { $0["name"] as? String } == ["AbstractEntity", "Entity", "OtherEntity", "UnrelatedEntity"])
    }

    @Test(arguments: ReferenceModels.names)
    func validateAcceptsEveryReferenceModel(name: String) throws {
        let model = try ReferenceModels.load(name)
        let run = try strata("model", "validate", ReferenceModels.url(name).path)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("valid: \(model.entities.count) entities"))
        // Warnings (missing inverses in mogenerator) go to stderr, one per line.
        for line in run.stderr.split(separator: "\n") {
            #expect(line.contains(": warning: "))
        }
        if name == "rentzsch_mogenerator" {
            #expect(run.stderr.split(separator: "\n").count == 2)
            #expect(run.stdout == "valid: 9 entities (2 warnings)\n")
        }
    }

    @Test func validateReportsEveryErrorAndFails() throws {
        let folder = try ReferenceModels.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try ReferenceModels.write(ReferenceModels.document("""
            <entity name="Book">
                <attribute name="title" attributeType="Text"/>
                <relationship name="author" maxCount="1" destinationEntity="Writer" inverseName="books" inverseEntity="Writer"/>
            </entity>
            <entity name="Book"/>
            <configuration name="Main"><memberEntity name="Shelf"/></configuration>
            """), to: "Broken.xcdatamodel/contents", in: folder)
        let run = try strata("model", "validate", file.deletingLastPathComponent().path)
        #expect(run.status == 1)
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("\(file.path):4: error: Book.title: unknown attribute type 'Text'"))
        #expect(lines.contains("\(file.path):5: error: Book.author: destination entity 'Writer' does not exist"))
        #expect(lines.contains { $0.hasPrefix("\(file.path):7: error: Book: duplicate entity name 'Book'") })
        #expect(lines.contains("\(file.path):8: error: Shelf: configuration 'Main' lists unknown entity 'Shelf'"))
        #expect(lines.count == 4)
        #expect(run.stdout == "invalid: 4 errors, 0 warnings\n")
    }

    @Test func unreadableInputFailsPleasantly() throws {
        let folder = try ReferenceModels.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let garbage = try ReferenceModels.write("this is not xml <", to: "garbage.contents", in: folder)
        let notModel = try ReferenceModels.write("<plist/>", to: "plist.contents", in: folder)
        let missing = folder.appendingPathComponent("missing.xcdatamodeld")
        for command in ["inspect", "validate"] {
            for path in [garbage, notModel, missing] {
                let run = try strata("model", command, path.path)
                #expect(run.status == 1, "\(command) \(path.lastPathComponent)")
                #expect(run.stdout.isEmpty)
                #expect(run.stderr.hasPrefix("error: \(path.path)"), "\(run.stderr)")
                #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
                #expect(!run.stderr.contains("Fatal error") && !run.stderr.contains("Stack"))
            }
        }
    }

    @Test func usageErrorsDoNotCrash() throws {
        let run = try strata("model", "inspect")
        #expect(run.status != 0)
        #expect(run.stderr.contains("Missing expected argument"))
        let help = try strata("model", "--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("inspect") && help.stdout.contains("validate"))
    }
}
