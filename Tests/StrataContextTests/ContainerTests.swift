import Foundation
import Testing
import StrataContext
import StrataModel
import StrataSamples
import StrataStore
import StrataSQLite

@Suite struct ContainerTests {
    @Test func everyStoreFailureIsReportedByStore() async throws {
        let directory = TemporaryDirectory()
        let missing = directory.url.appendingPathComponent("missing/Feedback.sqlite")
        let descriptions = [
            StoreDescription(url: directory.url.appendingPathComponent("Books.sqlite"), type: .sqlite, configuration: "Book"),
            StoreDescription(url: missing, type: .sqlite, configuration: "Feedback", isReadOnly: true),
            StoreDescription(url: nil, type: .inMemory, configuration: "Nowhere"),
        ]
        do {
            _ = try await PersistentContainer(model: BooksSample.model, storeDescriptions: descriptions, factory: .standard, transformers: BooksSample.transformers)
            Issue.record("expected the container to fail")
        } catch let error as StrataError {
            #expect(error.code == .storeOpen)
            #expect(error.message.contains("2 of 3 store(s) failed"))
            #expect(error.details.count >= 2)
            #expect(error.details.contains { $0.contains(missing.path) })
            #expect(error.details.contains { $0.contains("no configuration 'Nowhere'") })
        }
    }

    @Test("A factory opens only the store types it was given; a missing one is 134080 naming the module that opens it")
    func factoryOpensOnlyItsStoreTypes() async throws {
        let directory = TemporaryDirectory()
        let sqlite = StoreDescription(url: directory.url.appendingPathComponent("Books.sqlite"), type: .sqlite, configuration: "Book")
        #expect(StoreFactory.builtIn.types == [.inMemory, .binary])
        #expect(StoreFactory.standard.types == [.inMemory, .binary, .sqlite])
        do {
            _ = try await PersistentContainer(model: BooksSample.model, storeDescriptions: [sqlite, .inMemory(configuration: "Feedback")], factory: .builtIn, transformers: BooksSample.transformers)
            Issue.record("expected the built-in factory to refuse a SQLite store")
        } catch let error as StrataError {
            #expect(error.code == .storeOpen)
            #expect(error.details.contains { $0.contains("does not open SQLite stores (import StrataSQLite and use StoreFactory.standard)") })
        }
        // Nothing was created for the refused store.
        #expect(!FileManager.default.fileExists(atPath: sqlite.url?.path ?? ""))
        // The same descriptions open with the standard factory; in-memory
        // stores open with either.
        let container = try await PersistentContainer(model: BooksSample.model, storeDescriptions: [sqlite, .inMemory(configuration: "Feedback")], factory: .standard, transformers: BooksSample.transformers)
        #expect(container.coordinator.stores.count == 2)
        try await container.close()
        let memory = try await PersistentContainer(model: BooksSample.model, storeDescriptions: [.inMemory(configuration: "Book"), .inMemory(configuration: "Feedback")], factory: .builtIn, transformers: BooksSample.transformers)
        try await memory.close()
        // A remote description is never opened from a factory.
        await #expect(throws: StrataError.self) {
            _ = try await StoreFactory.standard.open(StoreDescription(url: nil, type: .remote), model: BooksSample.model, transformers: BooksSample.transformers)
        }
    }

    @Test func unknownTransformerFailsAtOpen() async throws {
        do {
            _ = try await PersistentContainer(model: BooksSample.model, storeDescriptions: [.inMemory(configuration: "Book"), .inMemory(configuration: "Feedback")], factory: .standard)
            Issue.record("expected the container to fail")
        } catch let error as StrataError {
            #expect(error.code == .storeOpen)
            #expect(error.details.contains { $0.contains("Book.coverColor uses unknown value transformer 'ColorToDataTransformer'") })
        }
    }

    @Test func invalidModelIsRefusedBeforeAnyStoreOpens() async throws {
        let model = ObjectModel(name: "Bad", entities: [
            EntityDescription(name: "A", relationships: [.init(name: "b", destination: "Missing")]),
        ])
        await #expect(throws: StrataError.self) {
            _ = try await PersistentContainer(model: model, storeDescriptions: [.inMemory()], factory: .standard)
        }
    }

    @Test func entityInSeveralStoresNeedsAStoreOnInsert() async throws {
        let model = ObjectModel(name: "Shared", entities: [
            EntityDescription(name: "Note", attributes: [.init(name: "text", type: .string)]),
        ], configurations: [
            ConfigurationDescription(name: "Local", entities: ["Note"]),
            ConfigurationDescription(name: "Cloud", entities: ["Note"]),
        ])
        let container = try await PersistentContainer(model: model, storeDescriptions: [.inMemory(configuration: "Local"), .inMemory(configuration: "Cloud")], factory: .standard)
        let cloud = try #require(container.coordinator.stores.first { $0.configurationName == "Cloud" }).identifier
        let counts: [Int] = try await container.viewContext.perform { context in
            var codes: [Int] = []
            do { _ = try context.insert("Note") } catch let error as StrataError { codes.append(error.code.rawValue) }
            let note = try context.insert("Note", into: cloud)
            try note.setValue(.string("hi"), forKey: "text")
            let local = try context.insert("Note", into: container.coordinator.stores[0].identifier)
            try local.setValue(.string("there"), forKey: "text")
            try await context.save()
            context.reset()
            // Fetched from both stores.
            codes.append(try await context.count(.init(entityName: "Note")))
            return codes
        }
        #expect(counts == [140104, 2])
        try await container.close()
    }
}
