import StrataModel
import StrataSamples
import StrataStore

/// The binary store file decoder. The first input byte chooses: bit 0
/// clear, the rest is the file as it is (header and checksums included);
/// set, the rest is a payload wrapped with a valid header, so that the
/// fuzzer gets past the checksums to the schema, rows and links. Bit 1
/// chooses the model: the Books sample or ``FuzzModel``. Decoding must
/// succeed or refuse with a ``StrataError`` naming where (134080 for
/// corruption, 134100 for a model the file does not fit).
enum BinaryStoreTarget {
    /// Prepared once: the model's layout, schema and version hashes are
    /// the same for every input.
    static let booksSetup = try? BinaryStore.DecodingSetup(model: BooksSample.model)
    static let fuzzModelSetup = try? BinaryStore.DecodingSetup(model: FuzzModel.model)

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        let bytes = mode & 1 == 0 ? rest : BinaryStore.file(payload: rest)
        guard let setup = mode & 2 == 0 ? Self.booksSetup : Self.fuzzModelSetup else {
            throw FuzzFinding(.binaryStore, "the models' decoding setup could not be prepared")
        }
        do {
            _ = try BinaryStore.decodeFile(bytes, setup: setup)
        } catch let error as StrataError {
            guard error.code == .storeOpen || error.code == .incompatibleVersionHash else {
                throw FuzzFinding(.binaryStore, "refused with \(error.code.rawValue), not 134080 or 134100: \(error.message)")
            }
        } catch {
            throw FuzzFinding(.binaryStore, "an error that is not a StrataError: \(error)")
        }
    }
}
