import Foundation

/// Where this package's files are, and helpers to write model files into
/// temporary folders.
enum ModelFiles {
    /// The package root: three levels up from this file.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // StrataModelTests
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()   // root

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
