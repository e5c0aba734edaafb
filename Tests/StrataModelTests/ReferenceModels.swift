import Foundation
@testable import StrataModel

/// The shared real-world reference models: `<root>/../shared/reference/models`
/// beside the checkout, or the folder named by `STRATA_REFERENCE_MODELS`.
///
/// They are not part of this repository, so the suite that reads them
/// (``SharedReferenceModelTests``) is skipped where the folder is missing,
/// except on CI (`CI=true`), where the folder is expected and its absence
/// fails the suite instead of hiding it.
enum ReferenceModels {
    /// The environment variable that overrides the folder (a path; point it
    /// at a missing folder to see the suite skipped).
    static let environmentKey = "STRATA_REFERENCE_MODELS"

    /// The folder: `$STRATA_REFERENCE_MODELS` when set and not empty, else
    /// `<root>/../shared/reference/models`.
    static let directory: URL = {
        if let override = ProcessInfo.processInfo.environment[environmentKey], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        return ModelFiles.packageRoot
            .deletingLastPathComponent()
            .appendingPathComponent("shared/reference/models", isDirectory: true)
    }()

    /// Whether the folder exists.
    static let available: Bool = {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }()

    /// Whether this run is on CI (`CI=true`, as CI services set it).
    static let onCI = ProcessInfo.processInfo.environment["CI"]?.lowercased() == "true"

    /// Whether the shared-model suite runs: where the folder exists, and
    /// always on CI, so that a missing folder fails there instead of skipping.
    static let suiteRuns = available || onCI

    /// The base names of the five reference files.
    static let names = [
        "JohnEstropia_CoreStore",
        "JohnEstropia_CoreStore_StackSetupDemo",
        "SwiftGen_SwiftGen",
        "atomicbird_momcom",
        "rentzsch_mogenerator",
    ]

    /// The path of a reference file.
    static func url(_ name: String) -> URL {
        directory.appendingPathComponent("\(name).contents")
    }

    /// Loads a reference file.
    static func load(_ name: String) throws -> ObjectModel {
        try XcodeModelLoader.load(contentsOf: url(name))
    }
}
