import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import StrataContext
import StrataModel
import StrataSamples
import StrataStore
import StrataWire
import Testing
@testable import StrataServer

/// The connection's one event-loop handler: a get, a small fetch and a save
/// are each taken by the answerer that takes them alone, anything else (and
/// everything before the hello's answer, or after a frame that does not
/// decode) goes on to the async side, and answers to one read burst are
/// flushed once.
@Suite struct EventLoopRequestHandlerTests {
    private func frame(_ request: Strata_V1_ClientFrame) throws -> Frame {
        Frame(payload: ByteBuffer(bytes: try request.serializedBytes() as [UInt8]))
    }

    /// A core over SQLite sample stores in a new folder, with one saved
    /// book read through the row cache.
    private func core(in directory: URL) async throws -> (ServerCore, PersistentContainer, book: ObjectID) {
        let container = try await sampleSQLiteContainer(in: directory)
        let id = try await container.newBackgroundContext().perform { context in
            let book = try context.insert("Book")
            try book.setValue(.uuid(UUID()), forKey: "uuid")
            try book.setValue(.string("Cached"), forKey: "title")
            try book.setValue(.integer(321), forKey: "pages")
            _ = try await context.save()
            return book.objectID
        }
        let store = try #require(container.coordinator.store(identifier: id.storeIdentifier))
        _ = try await container.coordinator.snapshots(for: [id], in: store)
        return (quietCore(container.coordinator), container, id)
    }

    private func channel(_ core: ServerCore, _ state: ConnectionState) async throws -> NIOAsyncTestingChannel {
        try await NIOAsyncTestingChannel { channel in
            // Budgets no busy machine spends: what is answered here must not
            // depend on the machine.
            let batch = core.completionBatch(on: channel.eventLoop)
            try channel.pipeline.syncOperations.addHandler(EventLoopRequestHandler(
                gets: CachedGetHandler(core: core, state: state, maxFrameBytes: 1 << 20),
                fetches: FetchHandler(core: core, state: state, plans: FetchPlanCache(), maxFrameBytes: 1 << 20, readBudget: .seconds(30), burstBudget: .seconds(30)),
                saves: SaveHandler(core: core, state: state, maxFrameBytes: 1 << 20, logger: core.logger, batch: batch),
                state: state, batch: batch))
        }
    }

    @Test func eachRequestIsTakenByItsAnswererAndTheRestGoesOn() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-loop-handler-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (core, container, book) = try await core(in: directory)
        let state = ConnectionState(maxRequestsInFlight: 4)
        let channel = try await channel(core, state)
        let get = Strata_V1_ClientFrame.with {
            $0.requestID = 3
            $0.refresh = Strata_V1_RefreshRequest.with {
                $0.ids = [book.uriRepresentation]
                $0.skipFetched = true
            }
        }
        let fetch = Strata_V1_ClientFrame.with {
            $0.requestID = 4
            $0.fetch = Strata_V1_FetchRequest.with {
                $0.entity = "Book"
                $0.predicate = "pages == 321"
                $0.limit = 10
            }
        }
        let save = Strata_V1_ClientFrame.with {
            $0.requestID = 5
            $0.save = Strata_V1_SaveRequest.with {
                $0.inserts = [Strata_V1_InsertedObject.with {
                    $0.temporaryID = "t5"
                    $0.entity = "Book"
                    $0.values["uuid"] = PropertyValue.uuid(UUID()).wire
                    $0.values["title"] = PropertyValue.string("Saved").wire
                }]
            }
        }
        let ping = Strata_V1_ClientFrame.with {
            $0.requestID = 6
            $0.ping = Strata_V1_PingRequest()
        }

        // Before the hello's answer: everything goes on.
        for request in [get, fetch, save] {
            try await channel.writeInbound(try frame(request))
            #expect(try await channel.readInbound(as: Frame.self) != nil)
        }
        #expect(try await channel.readOutbound(as: ByteBuffer.self) == nil)

        state.helloAccepted()
        state.greeted(clientName: "test")

        try await channel.writeInbound(try frame(get))
        #expect(try await channel.readInbound(as: Frame.self) == nil, "the get went on")
        let got = try await nextServerFrame(channel)
        #expect(got.requestID == 3)
        #expect(got.response == .refresh(try await core.refresh(get.refresh, clientName: "test")))

        try await channel.writeInbound(try frame(fetch))
        #expect(try await channel.readInbound(as: Frame.self) == nil, "the fetch went on")
        let fetched = try await nextServerFrame(channel)
        #expect(fetched.requestID == 4)
        guard case .fetch(let batch)? = fetched.response else {
            Issue.record("not a fetch answer: \(fetched)")
            return
        }
        #expect(batch.objects.map(\.id) == [book.uriRepresentation])

        try await channel.writeInbound(try frame(save))
        #expect(try await channel.readInbound(as: Frame.self) == nil, "the save went on")
        let saved = try await nextServerFrame(channel)
        #expect(saved.requestID == 5)
        guard case .save(let response)? = saved.response else {
            Issue.record("not a save answer: \(saved)")
            return
        }
        #expect(response.inserted.map(\.temporaryID) == ["t5"])

        // What none of them answers goes on, as it was read.
        try await channel.writeInbound(try frame(ping))
        let passed = try #require(try await channel.readInbound(as: Frame.self))
        #expect(try Strata_V1_ClientFrame(serializedBytes: ProtobufBytes(passed.payload)) == ping)

        // A frame that does not decode goes on, and stops what is taken here.
        try await channel.writeInbound(Frame(payload: ByteBuffer(bytes: [0xFF, 0xFF, 0xFF])))
        #expect(try await channel.readInbound(as: Frame.self) != nil)
        try await channel.writeInbound(try frame(get))
        #expect(try await channel.readInbound(as: Frame.self) != nil, "a get was answered after a protocol error")
        #expect(try await channel.readOutbound(as: ByteBuffer.self) == nil)

        await state.limiter.waitUntilIdle()
        _ = try await channel.finish()
        try await container.close()
    }

    /// Counts the read bursts' ends that reach it.
    private final class ReadBurstEnds: ChannelInboundHandler, Sendable {
        typealias InboundIn = Frame
        let count = NIOLockedValueBox(0)

        func channelReadComplete(context: ChannelHandlerContext) {
            count.withLockedValue { $0 += 1 }
            context.fireChannelReadComplete()
        }
    }

    @Test func whileTheSocketIsNotWritableRequestsGoOnAndABurstAnsweredHereEndsHere() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-loop-handler-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (core, container, book) = try await core(in: directory)
        let state = ConnectionState(maxRequestsInFlight: 4)
        state.helloAccepted()
        state.greeted(clientName: "test")
        let channel = try await channel(core, state)
        let ends = ReadBurstEnds()
        try await channel.pipeline.addHandler(ends)
        let get = try frame(Strata_V1_ClientFrame.with {
            $0.requestID = 3
            $0.refresh = Strata_V1_RefreshRequest.with {
                $0.ids = [book.uriRepresentation]
                $0.skipFetched = true
            }
        })

        // Answered here: the burst's end does not go on.
        try await channel.writeInbound(get)
        try #require(try await channel.readInbound(as: Frame.self) == nil)
        #expect(try await nextServerFrame(channel).requestID == 3)
        #expect(ends.count.withLockedValue { $0 } == 0)

        // Not writable: the get goes on, and so does the burst's end.
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        try await channel.writeInbound(get)
        #expect(try await channel.readInbound(as: Frame.self) != nil, "answered on the loop while not writable")
        #expect(ends.count.withLockedValue { $0 } == 1)

        // Writable again: answered here.
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        try await channel.writeInbound(get)
        try #require(try await channel.readInbound(as: Frame.self) == nil)
        #expect(try await nextServerFrame(channel).requestID == 3)
        #expect(ends.count.withLockedValue { $0 } == 1)

        _ = try await channel.finish()
        try await container.close()
    }
}
