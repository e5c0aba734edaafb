import ArgumentParser
import Foundation
import StrataModel

/// Output helpers shared by the commands: stderr lines and model loading
/// that turns failures into a one-line message and exit code 1.
enum Console {
    /// Writes one line to standard error.
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Loads the model at `path`, or prints why it cannot and exits with 1.
    static func loadModel(at path: String) throws -> ObjectModel {
        do {
            return try XcodeModelLoader.load(contentsOf: URL(fileURLWithPath: path))
        } catch let error as StrataError {
            Self.error("error: \(error.message)")
            throw ExitCode.failure
        } catch {
            Self.error("error: \(path): \(error.localizedDescription)")
            throw ExitCode.failure
        }
    }
}
