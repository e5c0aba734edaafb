import Foundation
import Testing
@testable import StrataModel

/// `strata model inspect` and `strata model validate`, run as a process
/// (`swift build` makes the executable before the tests run), against the
/// package's fixtures. The shared real-world models are covered by
/// ``SharedReferenceModelTests``.
@Suite struct ModelCommandTests {
    /// Runs `strata` with these arguments.
    private func strata(_ arguments: String...) throws -> StrataTool.Run {
        try StrataTool.run(arguments)
    }

    @Test(arguments: FixtureModels.names)
    func inspectJSONMatchesAnIndependentReading(name: String) throws {
        let url = FixtureModels.url(name)
        try StrataTool.expectInspectMatchesScan(of: url.path, contentsFile: url)
    }

    @Test func inspectJSONOfAModelPackageReadsItsCurrentVersion() throws {
        let current = FixtureModels.journal.appendingPathComponent("Journal 2.xcdatamodel/contents")
        try StrataTool.expectInspectMatchesScan(of: FixtureModels.journal.path, contentsFile: current)
    }

    @Test func inspectJSONSpotChecks() throws {
        let root = try StrataTool.json(try strata("model", "inspect", FixtureModels.url("Library").path, "--json"))
        let entities = try #require(root["entities"] as? [[String: Any]])
        #expect(entities.count == 10)
        let book = try #require(entities.first { $0["name"] as? String == "Book" })
        #expect(book["parent"] is NSNull)
        #expect(book["abstract"] as? Bool == false)
        let attributes = try #require(book["attributes"] as? [[String: Any]])
        let edition = try #require(attributes.first { $0["name"] as? String == "edition" })
        #expect(edition["type"] as? String == "Integer 16")
        #expect(edition["optional"] as? Bool == false)
        #expect(attributes.filter { $0["derived"] as? Bool == true }.count == 3)
        #expect(attributes.filter { $0["transient"] as? Bool == true }.map { $0["name"] as? String } == ["scratchNote"])
        let relationships = try #require(book["relationships"] as? [[String: Any]])
        #expect(relationships.map { $0["deleteRule"] as? String } == ["Nullify", "Nullify", "Nullify", "Cascade", "Nullify"])
        #expect(relationships.map { $0["toMany"] as? Bool } == [true, false, false, true, false])
        #expect(relationships.map { $0["inverse"] as? String } == ["books", "sequel", "catalog", "book", "prequel"])
        let fetched = try #require(book["fetchedProperties"] as? [[String: Any]])
        #expect(fetched.map { $0["entity"] as? String } == ["Book", "Review"])
        let person = try #require(entities.first { $0["name"] as? String == "Person" })
        #expect(person["abstract"] as? Bool == true)
        let librarian = try #require(entities.first { $0["name"] as? String == "Librarian" })
        #expect(librarian["parent"] as? String == "Member")
        #expect((librarian["attributes"] as? [[String: Any]])?.count == 2)   // own attributes only
        let mentor = try #require((librarian["relationships"] as? [[String: Any]])?.last)
        #expect(mentor["deleteRule"] as? String == "No Action")
        let configurations = try #require(root["configurations"] as? [[String: Any]])
        #expect(configurations.map { $0["name"] as? String } == ["Catalog", "Device", "Synced"])
        #expect(configurations.last?["entities"] as? [String] == ["Preference", "SyncedPreference"])

        let telemetry = try StrataTool.json(try strata("model", "inspect", FixtureModels.url("Telemetry").path, "--json"))
        #expect((telemetry["configurations"] as? [Any])?.isEmpty == true)
        let sensor = try #require((telemetry["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Sensor" })
        let replacement = try #require((sensor["relationships"] as? [[String: Any]])?.first { $0["name"] as? String == "replacement" })
        #expect(replacement["inverse"] is NSNull)
        #expect(replacement["toMany"] as? Bool == false)
        let calibrations = try #require((sensor["relationships"] as? [[String: Any]])?.first)
        #expect(calibrations["ordered"] as? Bool == true)
        #expect(calibrations["deleteRule"] as? String == "Cascade")
    }

    @Test func inspectPrintsAReadableTree() throws {
        let path = FixtureModels.url("Telemetry").path
        let run = try strata("model", "inspect", path)
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        #expect(run.stdout.hasPrefix("Model Telemetry (\(path)): 4 entities, 0 configurations, 3 fetch requests\n"))
        #expect(run.stdout.contains("\nSensor  class STSensor\n"))
        #expect(run.stdout.contains("\n  rangeLow: Integer 16  default -40, min -300, max 300\n"))
        #expect(run.stdout.contains("\n  label: String  default \"unnamed\", min 1, max 64\n"))
        #expect(run.stdout.contains("\n  scratch: Undefined?  transient\n"))
        #expect(run.stdout.contains("\n  calibrations -> [Calibration]  ordered, inverse sensor, Cascade\n"))
        #expect(run.stdout.contains("\n  replacement -> Sensor?  no inverse, Nullify\n"))
        #expect(run.stdout.contains("\n  station -> Station  count 1…1, inverse sensors, Nullify\n"))
        #expect(run.stdout.contains("\n  sensors -> [Sensor]  count 1…16, inverse station, Cascade\n"))
        #expect(run.stdout.contains("\n  laterReadings => [Reading]  fetched where sensor == $FETCH_SOURCE.sensor AND recorded > $FETCH_SOURCE.recorded\n"))
        #expect(run.stdout.hasSuffix("""

            Fetch requests
              flaggedReadings: Reading where flagged == YES, result type 1
              recentReadings: Reading where recorded > $SINCE AND quality >= 50, limit 500
              stationByCode: Station where code ==[c] $CODE, limit 1

            """))

        let library = try strata("model", "inspect", FixtureModels.url("Library").path)
        #expect(library.status == 0)
        #expect(library.stdout.contains("\nPerson  (abstract)  class Person\n"))
        #expect(library.stdout.contains("\nLibrarian : Member  class Librarian\n"))
        #expect(library.stdout.contains("\n  books -> [Book]  ordered, inverse authors, Nullify\n"))
        #expect(library.stdout.contains("\n  mentor -> Librarian?  inverse mentees, No Action\n"))
        #expect(library.stdout.contains("\n  titleKey: String?  derived = canonical:(title)\n"))
        #expect(library.stdout.contains("\n  sessionToken: String?  transient\n"))
        #expect(library.stdout.contains("\nConfigurations\n  Catalog: Author, Book, Librarian, Member, Person, Publisher, Review\n  Device: DevicePreference, Preference\n  Synced: Preference, SyncedPreference\n"))
    }

    @Test func inspectAcceptsModelFolders() throws {
        // The package: its .xccurrentversion names "Journal 2".
        let run = try strata("model", "inspect", FixtureModels.journal.path, "--json")
        #expect(run.status == 0)
        let root = try StrataTool.json(run)
        #expect(root["name"] as? String == "Journal 2")
        #expect((root["entities"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Entry", "Notebook", "Tag"])
        // One version folder of it.
        let older = try StrataTool.json(try strata(
            "model", "inspect", FixtureModels.journal.appendingPathComponent("Journal.xcdatamodel").path, "--json"))
        #expect(older["name"] as? String == "Journal")
        #expect((older["entities"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Entry", "Tag"])
    }

    @Test(arguments: FixtureModels.allPaths)
    func validateAcceptsEveryFixture(path: String) throws {
        let model = try XcodeModelLoader.load(contentsOf: URL(fileURLWithPath: path))
        let run = try strata("model", "validate", path)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("valid: \(model.entities.count) entities"))
        // Warnings go to stderr, one per line.
        for line in run.stderr.split(separator: "\n") {
            #expect(line.contains(": warning: "))
        }
        switch model.name {
        case "Library": #expect(run.stdout == "valid: 10 entities\n" && run.stderr.isEmpty)
        case "Telemetry":
            #expect(run.stdout == "valid: 4 entities (1 warning)\n")
            #expect(run.stderr == "\(path):37: warning: Sensor.replacement: relationship has no inverse; changes will not be reflected on 'Sensor'\n")
        case "Oddities":
            #expect(run.stdout == "valid: 3 entities (1 warning)\n")
            #expect(run.stderr.hasPrefix("\(path):14: warning: Gadget.byLocationIndex: fetch index 'byLocationIndex': expression index elements"))
        default: #expect(run.stderr.isEmpty, "\(model.name)")
        }
    }

    @Test func validateReportsEveryErrorAndFails() throws {
        let folder = try ModelFiles.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try ModelFiles.write(ModelFiles.document("""
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
        let folder = try ModelFiles.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let garbage = try ModelFiles.write("this is not xml <", to: "garbage.contents", in: folder)
        let notModel = try ModelFiles.write("<plist/>", to: "plist.contents", in: folder)
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
