/// Where and why a binary store file cannot be read.
struct BinaryCorruption: Error, Sendable {
    /// The byte offset in the file where reading failed.
    var offset: Int
    /// What was wrong there.
    var reason: String
}
