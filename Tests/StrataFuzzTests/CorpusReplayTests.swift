import Foundation
import StrataFuzzing
import Testing

/// Every input of `Fuzz/Corpus/<target>/` (the committed seeds and every
/// input that once crashed a target) through the same entry points the
/// fuzzers call, without a fuzzer: a fixed crash that comes back fails here.
@Suite("Fuzz corpus replay")
struct CorpusReplayTests {
    /// `Fuzz/Corpus`.
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus", isDirectory: true)

    /// The files of one target's corpus, sorted.
    static func inputs(_ target: FuzzTarget) throws -> [URL] {
        let folder = corpus.appendingPathComponent(target.rawValue, isDirectory: true)
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test("Every corpus file runs through its target without a finding", arguments: FuzzTarget.allCases)
    func replay(_ target: FuzzTarget) async throws {
        let files = try Self.inputs(target)
        #expect(files.count >= 3, "the \(target.rawValue) corpus has \(files.count) files; seeds are committed")
        for file in files {
            let input = try [UInt8](Data(contentsOf: file))
            do {
                try await target.run(input)
            } catch {
                Issue.record("\(target.rawValue)/\(file.lastPathComponent): \(error)")
            }
        }
    }

    /// With `STRATA_WRITE_SEEDS=1` (`Tools/fuzz.sh seed`), writes the seeds
    /// to the corpus; otherwise checks that each one is committed.
    @Test("Every seed is in the corpus")
    func seedsAreCommitted() async throws {
        let write = ProcessInfo.processInfo.environment["STRATA_WRITE_SEEDS"] == "1"
        for (target, seeds) in try await FuzzSeeds.all() {
            let folder = Self.corpus.appendingPathComponent(target.rawValue, isDirectory: true)
            for (name, bytes) in seeds {
                let file = folder.appendingPathComponent("seed-\(name)")
                if write {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    try Data(bytes).write(to: file)
                } else {
                    #expect(FileManager.default.fileExists(atPath: file.path), "\(target.rawValue)/seed-\(name) is missing: run Tools/fuzz.sh seed")
                }
            }
        }
    }
}
