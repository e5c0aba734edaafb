import Foundation
import StrataSQLite
import Logging
import NIOCore
import NIOEmbedded
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataWire
import Testing
@testable import StrataServer

/// Saves started from the event loop: taken only when every condition
/// holds, answered as the async side answers (saved objects, refusals,
/// statistics), holding an in-flight slot until the answer is queued.
@Suite struct SaveHandlerTests {
    private func core() async throws -> ServerCore {
        quietCore(try await sampleInMemoryContainer().coordinator)
    }

    /// A core over the sample in memory, or in SQLite stores in a new
    /// folder (whose saves go from the loop to the writer with no task).
    private func core(sqlite: Bool) async throws -> (core: ServerCore, container: PersistentContainer, directory: URL?) {
        guard sqlite else {
            let container = try await sampleInMemoryContainer()
            return (quietCore(container.coordinator), container, nil)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-save-handler-\(UUID().uuidString)")
        let container = try await sampleSQLiteContainer(in: directory)
        return (quietCore(container.coordinator), container, directory)
    }

    private func frame(_ request: Strata_V1_ClientFrame) throws -> Frame {
        Frame(payload: ByteBuffer(bytes: try request.serializedBytes() as [UInt8]))
    }

    private func insert(requestID: UInt64, title: PropertyValue) -> Strata_V1_ClientFrame {
        Strata_V1_ClientFrame.with {
            $0.requestID = requestID
            $0.save = Strata_V1_SaveRequest.with {
                $0.inserts = [Strata_V1_InsertedObject.with {
                    $0.temporaryID = "t\(requestID)"
                    $0.entity = "Book"
                    $0.values["uuid"] = PropertyValue.uuid(UUID()).wire
                    $0.values["title"] = title.wire
                }]
            }
        }
    }

    /// A testing channel (thread-safe: the save's task writes from another
    /// thread) with a save handler.
    private func channel(_ core: ServerCore, _ state: ConnectionState) async throws -> NIOAsyncTestingChannel {
        try await NIOAsyncTestingChannel { channel in
            try channel.pipeline.syncOperations.addHandler(SaveHandler(core: core, state: state, maxFrameBytes: 1 << 20, logger: core.logger,
                                                                       batch: core.completionBatch(on: channel.eventLoop)))
        }
    }

    /// The next answer written, decoded (the save runs in a task: waits
    /// for it, up to 20 s).
    private func answer(_ channel: NIOAsyncTestingChannel) async throws -> Strata_V1_ServerFrame {
        try await nextServerFrame(channel)
    }

    private func count(_ core: ServerCore) async throws -> Int {
        try await core.makeContext(clientName: "test").perform { context in
            try await context.count(FetchRequest(entityName: "Book"))
        }
    }

    @Test(arguments: [false, true])
    func savesFromTheLoopAndAnswersAsTheAsyncSideWould(sqlite: Bool) async throws {
        let (core, container, directory) = try await core(sqlite: sqlite)
        defer { if let directory { try? FileManager.default.removeItem(at: directory) } }
        #expect(core.savesWithoutTasks == sqlite)
        let state = ConnectionState(maxRequestsInFlight: 4)
        let channel = try await channel(core, state)

        // Before the hello's answer: passed on, nothing saved.
        try await channel.writeInbound(try frame(insert(requestID: 5, title: .string("early"))))
        #expect(try await channel.readInbound(as: Frame.self) != nil)
        #expect(try await count(core) == 0)

        state.helloAccepted()

        state.greeted(clientName: "tester")
        try await channel.writeInbound(try frame(insert(requestID: 7, title: .string("Dune"))))
        #expect(try await channel.readInbound(as: Frame.self) == nil, "the save went on to the async side")
        let saved = try await answer(channel)
        #expect(saved.requestID == 7)
        guard case .save(let response)? = saved.response else {
            Issue.record("not a save answer: \(saved)")
            return
        }
        #expect(response.inserted.map(\.temporaryID) == ["t7"])
        let id = try #require(response.inserted.first?.id)
        #expect(response.versions[id] == 1)
        #expect(try await count(core) == 1)

        // A refusal (a mandatory title set to nil) is the async side's
        // status, and both are counted.
        try await channel.writeInbound(try frame(insert(requestID: 8, title: .null)))
        let refused = try await answer(channel)
        #expect(refused.requestID == 8)
        #expect(refused.status.code == .invalidArgument, "\(refused.status)")
        #expect(refused.status.strataCode == Int32(StrataError.Code.validationMissingMandatoryProperty.rawValue))
        #expect(refused.status.propertyErrors.first?.objectID == "t8")
        let stats = core.statsResponse().operations.first { $0.operation == "save" }
        #expect(stats?.requests == 2)
        #expect(stats?.errors == 1)
        #expect(try await count(core) == 1)
        // Every slot given back once the answers are queued.
        await state.limiter.waitUntilIdle()
        #expect(state.limiter.running == 0)
        _ = try await channel.finish()
        try await container.close()
    }

    @Test func leavesToTheAsyncSideWhatItMustNotTake() async throws {
        let core = try await core()
        let state = ConnectionState(maxRequestsInFlight: 1)
        let channel = try await channel(core, state)
        state.helloAccepted()
        state.greeted(clientName: "tester")

        // Not a save.
        try await channel.writeInbound(try frame(Strata_V1_ClientFrame.with { $0.requestID = 3; $0.ping = Strata_V1_PingRequest() }))
        #expect(try await channel.readInbound(as: Frame.self) != nil)
        // Request ID 0 (the async side refuses it).
        try await channel.writeInbound(try frame(insert(requestID: 0, title: .string("zero"))))
        #expect(try await channel.readInbound(as: Frame.self) != nil)
        // Bytes that are not protobuf at all.
        try await channel.writeInbound(Frame(payload: ByteBuffer(bytes: [0x72, 0x05, 0x01])))
        #expect(try await channel.readInbound(as: Frame.self) != nil)
        // A frame larger than the loop decodes.
        let big = insert(requestID: 11, title: .string(String(repeating: "x", count: SaveHandler.maximumFrameBytes)))
        try await channel.writeInbound(try frame(big))
        #expect(try await channel.readInbound(as: Frame.self) != nil)
        // Every in-flight slot taken: the async side's backpressure applies.
        #expect(state.limiter.tryAcquire())
        try await channel.writeInbound(try frame(insert(requestID: 9, title: .string("waits"))))
        #expect(try await channel.readInbound(as: Frame.self) != nil)
        state.limiter.release()
        #expect(state.limiter.running == 0)
        #expect(try await count(core) == 0)
        _ = try await channel.finish()
    }

    @Test func takesNothingOnceTheConnectionDrainsOrAFrameBreaksTheProtocol() async throws {
        let core = try await core()
        // Draining: no slot is handed out without waiting.
        let draining = ConnectionState(maxRequestsInFlight: 4)
        let first = try await channel(core, draining)
        draining.helloAccepted()
        draining.greeted(clientName: "tester")
        draining.limiter.stopTaking()
        try await first.writeInbound(try frame(insert(requestID: 3, title: .string("late"))))
        #expect(try await first.readInbound(as: Frame.self) != nil)
        _ = try await first.finish()

        // A frame naming a save that does not decode (its values' message
        // is cut short): passed on, and nothing after it is taken.
        let broken = ConnectionState(maxRequestsInFlight: 4)
        let second = try await channel(core, broken)
        broken.helloAccepted()
        broken.greeted(clientName: "tester")
        try await second.writeInbound(Frame(payload: ByteBuffer(bytes: [0x08, 0x04, 0x72, 0x03, 0x0A, 0x05, 0x01])))
        #expect(try await second.readInbound(as: Frame.self) != nil)
        #expect(!broken.answersOnEventLoop)
        #expect(broken.limiter.running == 0)
        try await second.writeInbound(try frame(insert(requestID: 5, title: .string("after"))))
        #expect(try await second.readInbound(as: Frame.self) != nil)
        // Stopped answering (the connection no longer reads requests).
        let stopped = ConnectionState(maxRequestsInFlight: 4)
        let third = try await channel(core, stopped)
        stopped.helloAccepted()
        stopped.greeted(clientName: "tester")
        stopped.stopReading(.protocolError)
        try await third.writeInbound(try frame(insert(requestID: 6, title: .string("gone"))))
        #expect(try await third.readInbound(as: Frame.self) != nil)
        #expect(try await count(core) == 0)
        _ = try await second.finish()
        _ = try await third.finish()
    }
}
