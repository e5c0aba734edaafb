import Foundation

/// Reading a security configuration file (auth file, rules, keys): whole,
/// bounded in size, every failure a ``ConfigurationFileError`` naming it.
public enum ConfigurationFile {
    /// The bytes of the file at `path`, refused beyond `maximumBytes`.
    public static func read(_ path: String, maximumBytes: Int) throws(ConfigurationFileError) -> Data {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if let size = attributes[.size] as? NSNumber, size.intValue > maximumBytes {
                throw ConfigurationFileError(file: path, "larger than \(maximumBytes) bytes")
            }
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as ConfigurationFileError {
            throw error
        } catch {
            throw ConfigurationFileError(file: path, "cannot be read: \(error.localizedDescription)")
        }
    }
}
