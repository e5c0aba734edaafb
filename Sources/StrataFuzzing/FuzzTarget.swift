/// The decoders of outside input that `Fuzz/` fuzzes, one target each.
/// Their names are the targets' names for `Tools/fuzz.sh` and the folders
/// of their corpora under `Fuzz/Corpus/`.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// The frame decoder: flag byte, length, zlib (``FrameTarget``).
    case frame
    /// Any request after a valid hello, decoded, checked and run as the
    /// server runs it (``RequestTarget``).
    case request
    /// The predicate parser, resolver, SQL compiler and evaluator, with
    /// SQLite and the in-memory store compared (``PredicateTarget``).
    case predicate
    /// The Xcode model loader, validation and SQLite schema (``ModelTarget``).
    case model
    /// The binary store file decoder (``BinaryStoreTarget``).
    case binaryStore = "binary-store"
    /// The CLI's and the wire's value parsers (``ValueTarget``).
    case value

    /// Runs one input through a target that needs no task (frame, model,
    /// binary-store, value) and returns true; false for the others.
    public func runSynchronously(_ input: [UInt8]) throws(FuzzFinding) -> Bool {
        switch self {
        case .frame: try FrameTarget.run(input)
        case .model: try ModelTarget.run(input)
        case .binaryStore: try BinaryStoreTarget.run(input)
        case .value: try ValueTarget.run(input)
        case .request, .predicate: return false
        }
        return true
    }

    /// Runs one input through the target. Errors that the input deserves
    /// are part of the run; a broken invariant throws ``FuzzFinding``.
    public func run(_ input: [UInt8]) async throws(FuzzFinding) {
        switch self {
        case .frame: try FrameTarget.run(input)
        case .request: try await RequestTarget.run(input)
        case .predicate: try await PredicateTarget.run(input)
        case .model: try ModelTarget.run(input)
        case .binaryStore: try BinaryStoreTarget.run(input)
        case .value: try ValueTarget.run(input)
        }
    }
}
