import Foundation
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataSQLite

/// A temporary directory removed when the fixture is released.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-context-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Opens containers for tests over each kind of store.
enum ContextFixture {
    static let storeKinds: [StoreDescription.StoreType] = [.inMemory, .sqlite, .binary]

    /// Store descriptions of `kind`, one per configuration of the model (or one store when it has none).
    static func descriptions(_ kind: StoreDescription.StoreType, model: ObjectModel, in directory: URL, readOnly: Set<String> = []) -> [StoreDescription] {
        let configurations: [String?] = model.configurations.isEmpty ? [nil] : model.configurations.map(\.name)
        return configurations.map { configuration in
            let name = configuration ?? "Default"
            let url: URL? = kind == .inMemory ? nil : directory.appendingPathComponent("\(name).\(kind.rawValue)")
            return StoreDescription(url: url, type: kind, configuration: configuration, isReadOnly: readOnly.contains(name))
        }
    }

    /// A container of the Books & Feedback sample on `kind` stores.
    static func books(_ kind: StoreDescription.StoreType, in directory: TemporaryDirectory) async throws -> PersistentContainer {
        try await PersistentContainer(
            model: BooksSample.model,
            storeDescriptions: descriptions(kind, model: BooksSample.model, in: directory.url), factory: .standard,
            transformers: BooksSample.transformers,
            transientRules: BooksSample.transientRules
        )
    }

    /// A library model with relationships of every delete rule, in one store.
    static let library = ObjectModel(name: "Library", entities: [
        EntityDescription(name: "Author", attributes: [
            .init(name: "name", type: .string),
        ], relationships: [
            .init(name: "books", destination: "Book", inverse: "author", toMany: true, deleteRule: .cascade),
            .init(name: "awards", destination: "Award", inverse: "winner", toMany: true, deleteRule: .deny),
            .init(name: "fans", destination: "Fan", inverse: "favourite", toMany: true, deleteRule: .nullify),
        ]),
        EntityDescription(name: "Book", attributes: [
            .init(name: "title", type: .string),
            .init(name: "pages", type: .integer16, isOptional: true, minValue: .integer(1), maxValue: .integer(5000)),
            .init(name: "isbn", type: .string, isOptional: true, minValue: .integer(10), maxValue: .integer(13)),
        ], relationships: [
            .init(name: "author", destination: "Author", inverse: "books", optional: true),
            .init(name: "tags", destination: "Tag", inverse: "books", toMany: true),
            .init(name: "chapters", destination: "Chapter", inverse: "book", toMany: true, ordered: true, deleteRule: .cascade),
        ]),
        EntityDescription(name: "Chapter", attributes: [
            .init(name: "name", type: .string),
        ], relationships: [
            .init(name: "book", destination: "Book", inverse: "chapters"),
        ]),
        EntityDescription(name: "Tag", attributes: [
            .init(name: "name", type: .string),
        ], relationships: [
            .init(name: "books", destination: "Book", inverse: "tags", toMany: true),
        ], uniquenessConstraints: [["name"]]),
        EntityDescription(name: "Award", attributes: [
            .init(name: "name", type: .string),
        ], relationships: [
            .init(name: "winner", destination: "Author", inverse: "awards", optional: true),
        ]),
        EntityDescription(name: "Fan", attributes: [
            .init(name: "name", type: .string),
        ], relationships: [
            .init(name: "favourite", destination: "Author", inverse: "fans", optional: true),
        ]),
    ])

    /// A container of ``library`` on one `kind` store.
    static func library(_ kind: StoreDescription.StoreType, in directory: TemporaryDirectory) async throws -> PersistentContainer {
        try await PersistentContainer(model: library, storeDescriptions: descriptions(kind, model: library, in: directory.url), factory: .standard)
    }

    static func request(_ entity: String, _ format: String? = nil, sort: [StrataQuery.SortDescriptor] = []) throws -> FetchRequest {
        guard let format else { return FetchRequest(entityName: entity, sortDescriptors: sort) }
        return try FetchRequest(entityName: entity, format: format, sortDescriptors: sort)
    }
}
