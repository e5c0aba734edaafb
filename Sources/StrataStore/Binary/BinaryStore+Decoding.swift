import Foundation
import StrataModel
import StrataQuery

extension BinaryStore {
    /// Decodes a store file's bytes for `model` exactly as opening the file
    /// does, without the file: every check, migration and error of
    /// ``init(description:model:)``. Then reads every object back, and
    /// returns how many there are. For the fuzz target and its corpus
    /// replay (`StrataFuzzing`).
    package static func decodeFile(_ bytes: [UInt8], model: ObjectModel, configuration: String? = nil) throws -> Int {
        let entityNames = StoreOpening.entityNames(configuration: configuration, model: model)
        let layout = try MemoryLayout(model: model, entityNames: entityNames)
        let schema = StoredSchema(model: model, entityNames: entityNames)
        let description = StoreDescription(url: URL(fileURLWithPath: "/fuzz.binary"), type: .binary, configuration: configuration)
        let storage = try decode(bytes, path: "fuzz.binary", description: description, model: model, schema: schema, layout: layout)
        let resolver = PredicateResolver(model: model)
        var objects = 0
        for name in entityNames.sorted() where model.entity(named: name)?.parentName.map({ !entityNames.contains($0) }) ?? true {
            objects += try storage.fetchSnapshots(resolver.resolve(FetchRequest(entityName: name))).count
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
