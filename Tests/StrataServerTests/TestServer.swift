import Foundation
import Logging
import StrataClient
import StrataContext
import StrataModel
import StrataSamples
import StrataServer
import StrataStore
import StrataSQLite
import StrataWire

/// A real server on 127.0.0.1 (a free port) over the Books & Feedback
/// sample in fresh SQLite stores, for one test.
final class TestServer: Sendable {
    let directory: URL
    let container: PersistentContainer
    let server: StrataServer
    let port: Int
    private let runTask: Task<Void, any Error>

    /// Starts a server; `directory` reuses existing stores (restart tests).
    static func start(
        directory: URL? = nil,
        model: ObjectModel? = nil,
        logger: Logger? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("strata-server-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // The sample by default; another model in one SQLite store.
        let container = try await PersistentContainer(
            model: model ?? BooksSample.model,
            storeDescriptions: model == nil ? BooksSample.sqliteStores(in: directory) : [StoreDescription(url: directory.appendingPathComponent("Model.sqlite"), type: .sqlite)], factory: .standard,
            transformers: model == nil ? BooksSample.transformers : ValueTransformerRegistry(),
            transientRules: model == nil ? BooksSample.transientRules : [:],
            rowCacheCapacity: 10_000
        )
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, shutdownGracePeriod: .seconds(5))
        configure(&configuration)
        let logger = logger ?? {
            var logger = Logger(label: "strata.test-server")
            logger.logLevel = .critical
            return logger
        }()
        let server = StrataServer(coordinator: container.coordinator, configuration: configuration, logger: logger)
        let port = try await server.listen()
        let runTask = Task { try await server.run() }
        return TestServer(directory: directory, container: container, server: server, port: port, runTask: runTask)
    }

    private init(directory: URL, container: PersistentContainer, server: StrataServer, port: Int, runTask: Task<Void, any Error>) {
        self.directory = directory
        self.container = container
        self.server = server
        self.port = port
        self.runTask = runTask
    }

    /// A client of this server.
    func client(_ name: String = "test-client", configure: (inout ClientConfiguration) -> Void = { _ in }) -> StrataClient {
        var configuration = ClientConfiguration(host: "127.0.0.1", port: port, clientName: name, connectTimeout: .seconds(5))
        configure(&configuration)
        return StrataClient(configuration: configuration)
    }

    /// Shuts down gracefully, waits for the server to stop, closes the stores.
    func stop(removingFiles: Bool = true) async throws {
        await server.shutdown()
        try await runTask.value
        try await container.close()
        if removingFiles { try? FileManager.default.removeItem(at: directory) }
    }
}

/// Builders for the sample's wire messages.
enum Wire {
    static func value(_ value: PropertyValue) -> Strata_V1_Value { value.wire }

    static func insertBook(_ temporaryID: String, title: String, uuid: UUID = UUID(), pages: Int64 = 100, author: String = "Author", price: String? = nil) -> Strata_V1_InsertedObject {
        Strata_V1_InsertedObject.with {
            $0.temporaryID = temporaryID
            $0.entity = "Book"
            $0.values["uuid"] = PropertyValue.uuid(uuid).wire
            $0.values["title"] = PropertyValue.string(title).wire
            $0.values["pages"] = PropertyValue.integer(pages).wire
            $0.values["author"] = PropertyValue.string(author).wire
            if let price, let decimal = Decimal(string: price) { $0.values["price"] = PropertyValue.decimal(decimal).wire }
        }
    }

    static func insertFeedback(_ temporaryID: String, bookUUID: UUID, rating: Int64, comment: String = "") -> Strata_V1_InsertedObject {
        Strata_V1_InsertedObject.with {
            $0.temporaryID = temporaryID
            $0.entity = "Feedback"
            $0.values["bookUUID"] = PropertyValue.uuid(bookUUID).wire
            $0.values["rating"] = PropertyValue.integer(rating).wire
            $0.values["comment"] = PropertyValue.string(comment).wire
        }
    }

    static func save(inserts: [Strata_V1_InsertedObject] = [], updates: [Strata_V1_UpdatedObject] = [], deletes: [Strata_V1_DeletedObject] = [], policy: Strata_V1_MergePolicy = .error) -> Strata_V1_SaveRequest {
        Strata_V1_SaveRequest.with {
            $0.inserts = inserts
            $0.updates = updates
            $0.deletes = deletes
            $0.mergePolicy = policy
        }
    }

    static func update(_ id: String, baseVersion: Int64, _ values: [String: PropertyValue]) -> Strata_V1_UpdatedObject {
        Strata_V1_UpdatedObject.with {
            $0.id = id
            $0.baseVersion = baseVersion
            $0.values = values.mapValues(\.wire)
        }
    }

    static func fetch(_ entity: String, _ predicate: String = "", sort: [String] = [], resultType: Strata_V1_ResultType = .objects) -> Strata_V1_FetchRequest {
        Strata_V1_FetchRequest.with {
            $0.entity = entity
            $0.predicate = predicate
            $0.resultType = resultType
            $0.sort = sort.map { key in
                Strata_V1_SortKey.with {
                    $0.key = key.hasPrefix("-") ? String(key.dropFirst()) : key
                    $0.descending = key.hasPrefix("-")
                }
            }
        }
    }
}

/// Waits for the next element of an async iterator, or nil after `timeout`.
func next<Element: Sendable>(_ stream: AsyncStream<Element>, within timeout: Duration = .seconds(5)) async -> Element? {
    await withTaskGroup(of: Element?.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
