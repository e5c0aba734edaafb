import Foundation
import StrataModel
import StrataQuery

extension BinaryStore {
    /// The store identifier in the binary store file at `path` (what
    /// StoreRestore checks a backup against); 134080 when it cannot be read,
    /// naming the byte offset where it is corrupt.
    package static func identifier(ofFileAt path: String) throws(StrataError) -> String {
        guard let bytes = try StoreFile.load(path, displayName: path) else {
            throw StrataError(.storeOpen, "\(path) cannot be read")
        }
        do {
            var decoder = try BinaryStoreDecoder(bytes)
            try decoder.readSchema()
            return decoder.identifier
        } catch {
            throw StrataError(.storeOpen, "\(path): corrupt at byte offset \(error.offset): \(error.reason)")
        }
    }

    /// Decodes a store file's bytes for `model` exactly as opening the file
    /// does, without the file: every check, migration and error of
    /// ``init(description:model:)``. Then reads every object back, and
    /// returns how many there are. For the fuzz target and its corpus
    /// replay (`StrataFuzzing`).
    package static func decodeFile(_ bytes: [UInt8], model: ObjectModel, configuration: String? = nil) throws -> Int {
        try decodeFile(bytes, setup: DecodingSetup(model: model, configuration: configuration))
    }

    /// What decoding a file needs of its model, prepared once (the
    /// layout, the schema with its version hashes, the fetches that read
    /// every object back) for decoding many files.
    package struct DecodingSetup: Sendable {
        let model: ObjectModel
        let description: StoreDescription
        let layout: MemoryLayout
        let schema: StoredSchema
        let readBack: [ResolvedFetch]

        /// Prepares decoding for `model` (and `configuration`).
        package init(model: ObjectModel, configuration: String? = nil) throws {
            let entityNames = StoreOpening.entityNames(configuration: configuration, model: model)
            self.model = model
            description = StoreDescription(url: URL(fileURLWithPath: "/fuzz.binary"), type: .binary, configuration: configuration)
            layout = try MemoryLayout(model: model, entityNames: entityNames)
            schema = StoredSchema(model: model, entityNames: entityNames)
            let resolver = PredicateResolver(model: model)
            readBack = try entityNames.sorted()
                .filter { name in model.entity(named: name)?.parentName.map { !entityNames.contains($0) } ?? true }
                .map { try resolver.resolve(FetchRequest(entityName: $0)) }
        }
    }

    /// ``decodeFile(_:model:configuration:)`` with its setup prepared.
    package static func decodeFile(_ bytes: [UInt8], setup: DecodingSetup) throws -> Int {
        let storage = try decode(bytes, path: "fuzz.binary", description: setup.description, model: setup.model, schema: setup.schema, layout: setup.layout)
        var objects = 0
        for fetch in setup.readBack {
            objects += try storage.fetchSnapshots(fetch).count
        }
        return objects
    }

    /// A store file around `payload`, with a valid header and checksums, as
    /// a save writes it: lets a fuzzer reach the decoder past the checksums.
    package static func file(payload: [UInt8]) -> [UInt8] {
        BinaryStoreFormat.file(payload: payload)
    }

    /// The payload of a store file (what follows its header).
    package static func payload(ofFile bytes: [UInt8]) -> [UInt8] {
        Array(bytes.dropFirst(BinaryStoreFormat.headerSize))
    }
}
