import ArgumentParser
import Foundation
import StrataModel

/// Output helpers shared by the commands: unbuffered stdout and stderr
/// writes (so `watch` lines appear at once, and output interleaves in
/// order), terminal styles, and model loading that turns failures into a
/// one-line message and exit code 1.
enum Console {
    /// Styles for standard output (colours only on a terminal).
    static let stdoutStyle = Style(enabled: Style.colourWanted(fileDescriptor: 1))
    /// Styles for standard error (colours only on a terminal).
    static let stderrStyle = Style(enabled: Style.colourWanted(fileDescriptor: 2))

    /// Writes `text` to standard output as is, at once.
    static func output(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// Writes one line to standard output, at once.
    static func line(_ text: String) {
        output(text + "\n")
    }

    /// Writes `text` to standard error as is, at once.
    static func errorOutput(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

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
