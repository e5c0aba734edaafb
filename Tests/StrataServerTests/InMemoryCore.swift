import Foundation
import Logging
import NIOCore
import NIOEmbedded
import StrataContext
import StrataModel
import StrataSamples
import StrataStore
import StrataSQLite
import StrataWire
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

/// The Books & Feedback sample in SQLite stores in `directory` (row cache
/// of 100), for tests whose saves go from the event loop to the writer
/// with no task and whose fetches are answered on the loop.
func sampleSQLiteContainer(in directory: URL) async throws -> PersistentContainer {
    try await PersistentContainer(
        model: BooksSample.model,
        storeDescriptions: BooksSample.sqliteStores(in: directory), factory: .standard,
        transformers: BooksSample.transformers,
        transientRules: BooksSample.transientRules,
        rowCacheCapacity: 100
    )
}

/// The next whole frame `channel` writes, decoded: waits for it (a save's
/// answer comes back from a task or the store's writer), up to 20 s.
func nextServerFrame(_ channel: NIOAsyncTestingChannel) async throws -> Strata_V1_ServerFrame {
    var written = try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
        group.addTask { try await channel.waitForOutboundWrite(as: ByteBuffer.self) }
        group.addTask {
            try await Task.sleep(for: .seconds(20))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let buffer = first else {
            throw StrataError(.storeTimeout, "no answer within 20 s")
        }
        return buffer
    }
    guard written.readInteger(as: UInt8.self) == 0, written.readInteger(as: UInt32.self).map(Int.init) == written.readableBytes else {
        throw StrataError(.invalidValue, "not a whole uncompressed frame")
    }
    return try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(written))
}
