import Foundation
@testable import StrataModel

/// The package's own model fixtures, committed in `Tests/ModelFixtures`
/// (outside every target folder, so SwiftPM neither warns about them nor
/// needs them declared as resources). They are found from this file's path,
/// so the tests pass from a plain clone with nothing beside it.
enum FixtureModels {
    /// `<root>/Tests/ModelFixtures`.
    static let directory = ModelFiles.packageRoot.appendingPathComponent("Tests/ModelFixtures")

    /// The base names of the bare `contents` files (`<name>.contents`).
    static let names = ["Library", "Oddities", "Telemetry"]

    /// The versioned model package: `Journal.xcdatamodeld` with the versions
    /// `Journal` and `Journal 2`, its `.xccurrentversion` naming `Journal 2`.
    static let journal = directory.appendingPathComponent("Journal.xcdatamodeld")

    /// Every loadable fixture path: the bare files, the package folder and
    /// its older version's folder.
    static let allPaths: [String] = names.map { url($0).path } + [
        journal.path,
        journal.appendingPathComponent("Journal.xcdatamodel").path,
    ]

    /// The path of a bare fixture file.
    static func url(_ name: String) -> URL {
        directory.appendingPathComponent("\(name).contents")
    }

    /// Loads a bare fixture file.
    static func load(_ name: String) throws -> ObjectModel {
        try XcodeModelLoader.load(contentsOf: url(name))
    }
}
