import Logging
import StrataContext
import StrataSamples
import StrataStore
import StrataSQLite
@testable import StrataServer

/// The Books & Feedback sample in memory stores (row cache of 100), for
/// tests that drive a ``ServerCore`` without a socket.
func sampleInMemoryContainer() async throws -> PersistentContainer {
    try await PersistentContainer(
        model: BooksSample.model,
        storeDescriptions: [.inMemory(configuration: "Book"), .inMemory(configuration: "Feedback")], factory: .standard,
        transformers: BooksSample.transformers,
        transientRules: BooksSample.transientRules,
        rowCacheCapacity: 100
    )
}

/// A server core over `coordinator` that logs nothing below critical.
func quietCore(_ coordinator: Coordinator) -> ServerCore {
    var logger = Logger(label: "strata.test")
    logger.logLevel = .critical
    return ServerCore(coordinator: coordinator, configuration: ServerConfiguration(port: 0), logger: logger)
}
