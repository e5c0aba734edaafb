import Foundation
@testable import StrataModel

/// Paths of the shared reference models (`<root>/../shared/reference/models`)
/// and helpers to load them and to make temporary model folders.
enum ReferenceModels {
    /// The package root: three levels up from this file.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // StrataModelTests
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()   // root

    /// `<root>/../shared/reference/models`.
    static let directory = packageRoot
        .deletingLastPathComponent()
        .appendingPathComponent("shared/reference/models")

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

    /// A fresh, empty temporary folder.
    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-model-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes `text` to `folder/relativePath`, creating folders as needed.
    @discardableResult
    static func write(_ text: String, to relativePath: String, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// A minimal model document with the given body inside `<model>`.
    static func document(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        \(body)
        </model>
        """
    }
}
