import Foundation
import Logging
import NIOCore
import NIOEmbedded
import StrataAuth
import StrataContext
import StrataModel
import StrataSamples
import StrataStore
import StrataWire
import Testing
@testable import StrataServer

/// Gets answered on the event loop from the row cache: only when every
/// condition holds, with exactly the async side's answer, and coherent with
/// saves over a live socket.
@Suite struct CachedGetHandlerTests {
    /// A server core over in-memory sample stores, with two saved books:
    /// `cached` read through the row cache, `uncached` never read.
    private func core(title cachedTitle: String = "Cached") async throws -> (ServerCore, cached: ObjectID, uncached: ObjectID) {
        let container = try await sampleInMemoryContainer()
        let ids = try await container.newBackgroundContext().perform { context in
            var books: [ManagedObject] = []
            for title in [cachedTitle, "Uncached"] {
                let book = try context.insert("Book")
                try book.setValue(.uuid(UUID()), forKey: "uuid")
                try book.setValue(.string(title), forKey: "title")
                try book.setValue(.integer(321), forKey: "pages")
                books.append(book)
            }
            _ = try await context.save()
            return books.map(\.objectID)
        }
        let coordinator = container.coordinator
        let store = try #require(coordinator.store(identifier: ids[0].storeIdentifier))
        // Saves add no rows to the cache: read only the first.
        #expect(coordinator.rowCache.statistics.count == 0)
        _ = try await coordinator.snapshots(for: [ids[0]], in: store)
        return (quietCore(coordinator), ids[0], ids[1])
    }

    private func frame(_ request: Strata_V1_ClientFrame) throws -> Frame {
        Frame(payload: ByteBuffer(bytes: try request.serializedBytes() as [UInt8]))
    }

    private func get(_ ids: [ObjectID], requestID: UInt64 = 7, skipFetched: Bool = true) -> Strata_V1_ClientFrame {
        Strata_V1_ClientFrame.with {
            $0.requestID = requestID
            $0.refresh = Strata_V1_RefreshRequest.with {
                $0.ids = ids.map(\.uriRepresentation)
                $0.skipFetched = skipFetched
            }
        }
    }

    @Test func compressesALargeAnswerWhenTheClientAcceptsCompression() async throws {
        let (core, cached, _) = try await core(title: String(repeating: "Long title ", count: 200))
        let state = ConnectionState()
        let channel = EmbeddedChannel(handler: CachedGetHandler(core: core, state: state, maxFrameBytes: 1 << 20))
        state.helloAccepted()
        state.greeted(clientName: "test")
        state.enableCompression()
        let request = get([cached])
        try channel.writeInbound(try frame(request))
        var written = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(written.readInteger(as: UInt8.self) == WireProtocol.compressedFlag)
        #expect(written.readInteger(as: UInt32.self).map(Int.init) == written.readableBytes)
        #expect(written.readableBytes < 1024, "2,200 bytes of a repeated title deflate well")
        let answer = try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(try Zlib.inflate(written, limit: 1 << 20)))
        #expect(answer.requestID == 7)
        #expect(answer.response == .refresh(try await core.refresh(request.refresh, clientName: "test")))
    }

    @Test func answersACachedGetOnTheEventLoopAsTheAsyncSideWould() async throws {
        let (core, cached, _) = try await core()
        let state = ConnectionState()
        let channel = EmbeddedChannel(handler: CachedGetHandler(core: core, state: state, maxFrameBytes: 1 << 20))
        let request = get([cached])

        // Before the hello's answer: passed on, nothing written.
        try channel.writeInbound(try frame(request))
        #expect(try channel.readInbound(as: Frame.self) != nil)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)

        state.helloAccepted()

        state.greeted(clientName: "test")
        try channel.writeInbound(try frame(request))
        #expect(try channel.readInbound(as: Frame.self) == nil, "a cached get went on to the async side")
        // A whole wire frame: flag, big-endian length, payload.
        var written = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(written.readInteger(as: UInt8.self) == 0)
        #expect(written.readInteger(as: UInt32.self).map(Int.init) == written.readableBytes)
        let answer = try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(written))
        #expect(answer.requestID == 7)
        let expected = try await core.refresh(request.refresh, clientName: "test")
        #expect(answer.response == .refresh(expected))
        #expect(expected.objects.first?.values["title"] == PropertyValue.string("Cached").wire)
        #expect(core.statsResponse().operations.first { $0.operation == "refresh" }?.requests == 1)

        // Stopped reading (client gone, shutdown): passed on again.
        state.stopReading(.protocolError)
        try channel.writeInbound(try frame(request))
        #expect(try channel.readInbound(as: Frame.self) != nil)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        _ = try channel.finish()
    }

    @Test func passesOnWhatItCannotAnswerWhole() async throws {
        let (core, cached, uncached) = try await core()
        let state = ConnectionState()
        state.helloAccepted()
        state.greeted(clientName: "test")
        let channel = EmbeddedChannel(handler: CachedGetHandler(core: core, state: state, maxFrameBytes: 1 << 20))
        let save = Strata_V1_ClientFrame.with { $0.requestID = 3; $0.save = Strata_V1_SaveRequest() }
        let cases: [(String, Frame)] = [
            ("an object not in the cache", try frame(get([cached, uncached]))),
            ("fetched properties asked for", try frame(get([cached], skipFetched: false))),
            ("request id 0", try frame(get([cached], requestID: 0))),
            ("a malformed ID", try frame(Strata_V1_ClientFrame.with { $0.requestID = 4; $0.refresh = .with { $0.ids = ["strata://nowhere"]; $0.skipFetched = true } })),
            ("relationships asked for", try frame(Strata_V1_ClientFrame.with { $0.requestID = 5; $0.refresh = .with { $0.ids = [cached.uriRepresentation]; $0.skipFetched = true; $0.includeRelationships = ["x"] } })),
            ("fetched properties named (the async side checks them)", try frame(Strata_V1_ClientFrame.with { $0.requestID = 6; $0.refresh = .with { $0.ids = [cached.uriRepresentation]; $0.includeFetched = ["bogus"] } })),
            ("another operation", try frame(save)),
            ("bytes that are not protobuf", Frame(payload: ByteBuffer(bytes: [0xFF, 0xFF, 0xFF]))),
        ]
        for (name, input) in cases {
            try channel.writeInbound(input)
            let passed = try channel.readInbound(as: Frame.self)
            #expect(passed == input, "\(name) was not passed on unchanged")
            #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "\(name) was answered on the event loop")
        }
        #expect(core.statsResponse().operations.isEmpty)
        _ = try channel.finish()
    }

    /// A caller bound by rules is answered here only for cached objects
    /// its `read` rule admits (judged on their values), exactly as the
    /// async side answers; anything else goes on to the async side, which
    /// answers an object it may not read as missing.
    @Test func aRuleBoundCallerIsAnsweredForTheObjectsItsRuleAdmits() async throws {
        let container = try await sampleInMemoryContainer()
        let (a, b) = try await container.newBackgroundContext().perform { context in
            var books: [ManagedObject] = []
            for (title, pages) in [("A", 5), ("B", 50)] as [(String, Int64)] {
                let book = try context.insert("Book")
                try book.setValue(.uuid(UUID()), forKey: "uuid")
                try book.setValue(.string(title), forKey: "title")
                try book.setValue(.integer(pages), forKey: "pages")
                books.append(book)
            }
            _ = try await context.save()
            return (books[0].objectID, books[1].objectID)
        }
        let coordinator = container.coordinator
        let store = try #require(coordinator.store(identifier: a.storeIdentifier))
        _ = try await coordinator.snapshots(for: [a, b], in: store)
        func rules(_ bookRead: String) throws -> AccessRules {
            try AccessRules(json: Data(#"{"Book": {"read": "\#(bookRead)"}, "Feedback": {"read": "TRUEPREDICATE"}}"#.utf8), file: "rules.json", model: BooksSample.model)
        }
        let control = AccessControl(try rules("pages <= 10"))
        var logger = Logger(label: "strata.test")
        logger.logLevel = .critical
        let core = ServerCore(coordinator: coordinator, configuration: ServerConfiguration(port: 0, accessControl: control), logger: logger)
        func channel(_ subject: String) -> (EmbeddedChannel, AccessPolicy?) {
            let identity = Identity(subject: subject)
            let policy = core.policy(for: identity)
            let state = ConnectionState()
            state.helloAccepted()
            state.greeted(clientName: "test", identity: identity, policy: policy)
            return (EmbeddedChannel(handler: CachedGetHandler(core: core, state: state, maxFrameBytes: 1 << 20)), policy)
        }
        /// Whether `ids` are answered on `channel`'s loop; when they are,
        /// the answer is the async side's for `policy`.
        func answeredHere(_ ids: [ObjectID], on channel: EmbeddedChannel, policy: AccessPolicy?) async throws -> Bool {
            let request = get(ids)
            try channel.writeInbound(try frame(request))
            guard var written = try channel.readOutbound(as: ByteBuffer.self) else {
                #expect(try channel.readInbound(as: Frame.self) != nil)
                // The async side: what may not be read is missing.
                let response = try await core.refresh(request.refresh, clientName: "test", policy: policy)
                #expect(response.objects.count + response.missing.count == ids.count)
                return false
            }
            #expect(try channel.readInbound(as: Frame.self) == nil)
            _ = written.readInteger(as: UInt8.self)
            _ = written.readInteger(as: UInt32.self)
            let answer = try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(written))
            #expect(answer.response == .refresh(try await core.refresh(request.refresh, clientName: "test", policy: policy)))
            return true
        }
        let (reader, policy) = channel("reader")
        #expect(policy != nil)
        #expect(try await answeredHere([a], on: reader, policy: policy))
        #expect(try await !answeredHere([b], on: reader, policy: policy))
        #expect(try await !answeredHere([a, b], on: reader, policy: policy))
        #expect(try await core.refresh(get([b]).refresh, clientName: "test", policy: policy).missing == [b.uriRepresentation])
        // Rules replaced: judged by the new rule.
        control.replace(try rules("pages > 10"))
        #expect(try await !answeredHere([a], on: reader, policy: policy))
        #expect(try await answeredHere([b], on: reader, policy: policy))
        // A rule on the caller's identity: each caller its own book.
        control.replace(try rules("title == $AUTH.subject"))
        let (callerA, policyA) = channel("A")
        #expect(try await answeredHere([a], on: callerA, policy: policyA))
        #expect(try await !answeredHere([b], on: callerA, policy: policyA))
        #expect(try await !answeredHere([a], on: reader, policy: policy))
        for channel in [reader, callerA] { _ = try channel.finish() }
        try await container.close()
    }

    @Test func afterAFrameThatIsNotAMessageNothingIsAnsweredOnTheLoop() async throws {
        let (core, cached, _) = try await core()
        let state = ConnectionState()
        state.helloAccepted()
        state.greeted(clientName: "test")
        let channel = EmbeddedChannel(handler: CachedGetHandler(core: core, state: state, maxFrameBytes: 1 << 20))
        let broken = Frame(payload: ByteBuffer(bytes: [0x7A, 0x05, 0x01]))   // field 15, 5 bytes announced, 1 there
        try channel.writeInbound(broken)
        #expect(try channel.readInbound(as: Frame.self) == broken)
        #expect(!state.answersOnEventLoop)
        try channel.writeInbound(try frame(get([cached])))
        #expect(try channel.readInbound(as: Frame.self) != nil, "a get after a broken frame was answered on the loop")
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        _ = try channel.finish()
    }

    @Test func largeAnswersAreLeftToTheAsyncSide() {
        let id = ObjectID(storeIdentifier: "S", entityName: "Book", key: .permanent(1))
        let small = Snapshot(objectID: id, version: 1, values: ["title": .string("Dune"), "pages": .integer(412)])
        let large = Snapshot(objectID: id, version: 1, values: ["title": .string(String(repeating: "x", count: CachedGetHandler.maximumAnswerBytes))])
        #expect(CachedGetHandler.approximateBytes(of: small) < 200)
        #expect(CachedGetHandler.approximateBytes(of: large) > CachedGetHandler.maximumAnswerBytes)
    }

    @Test func getsPipelinedBehindTheHelloAreAnsweredAfterIt() async throws {
        let server = try await TestServer.start()
        let seed = server.client("seed")
        let saved = try await seed.save(Wire.save(inserts: [Wire.insertBook("b", title: "Warm")]))
        let id = try #require(saved.inserted.first?.id)
        _ = try await seed.refresh([id], skipFetched: true)   // now in the row cache
        let hello = Strata_V1_ClientFrame.with {
            $0.requestID = 1
            $0.hello = .with { $0.version = .with { $0.major = WireProtocol.version.major }; $0.clientName = "pipelined" }
        }
        for _ in 0..<20 {
            let raw = try await RawConnection.connect(port: server.port)
            // The hello and five gets, each its own write, none waiting.
            raw.sendWithoutWaiting(try RawConnection.frameBytes(hello))
            for requestID in 2...6 {
                raw.sendWithoutWaiting(try RawConnection.frameBytes(Strata_V1_ClientFrame.with {
                    $0.requestID = UInt64(requestID)
                    $0.refresh = .with { $0.ids = [id]; $0.skipFetched = true }
                }))
            }
            // Generous: under the thread sanitizer on a loaded machine one
            // answer once took more than 5 s; a hang still fails.
            let first = try await raw.requireFrame(within: .seconds(20))
            #expect(first.requestID == 1, "request \(first.requestID) was answered before the hello")
            guard case .hello? = first.response else {
                Issue.record("the first answer is not the hello's: \(first)")
                await raw.close()
                continue
            }
            var answered: Set<UInt64> = []
            for _ in 2...6 { answered.insert(try await raw.requireFrame(within: .seconds(20)).requestID) }
            #expect(answered == [2, 3, 4, 5, 6])
            await raw.close()
        }
        await seed.close()
        try await server.stop()
    }

    @Test func readsTopLevelFieldNumbersWithoutDecoding() throws {
        let request = get([ObjectID(storeIdentifier: "S", entityName: "Book", key: .permanent(1))])
        let bytes: [UInt8] = try request.serializedBytes()
        #expect(CachedGetHandler.topLevel(ByteBuffer(bytes: bytes), has: 1) == true)
        #expect(CachedGetHandler.topLevel(ByteBuffer(bytes: bytes), has: 15) == true)
        #expect(CachedGetHandler.topLevel(ByteBuffer(bytes: bytes), has: 14) == false)
        #expect(CachedGetHandler.topLevel(ByteBuffer(bytes: bytes.dropLast()), has: 15) == nil)
        #expect(CachedGetHandler.topLevel(ByteBuffer(), has: 15) == false)
        // A varint longer than ten bytes, and wire types 3/4 (groups): not read.
        #expect(CachedGetHandler.topLevel(ByteBuffer(bytes: [UInt8](repeating: 0x80, count: 11) + [0x01]), has: 0) == nil)
        #expect(CachedGetHandler.topLevel(ByteBuffer(bytes: [0x0B]), has: 1) == nil)
    }

    @Test func aGetAfterAnAcknowledgedUpdateSeesItOverALiveSocket() async throws {
        let server = try await TestServer.start()
        let writer = server.client("writer")
        let reader = server.client("reader")
        let saved = try await writer.save(Wire.save(inserts: [Wire.insertBook("b", title: "First")]))
        let id = try #require(saved.inserted.first?.id)
        // Read twice: the second is answered from the cache.
        for _ in 0..<2 {
            let state = try #require(try await reader.refresh([id], skipFetched: true).objects.first)
            #expect(state.version == 1)
            #expect(state.values["title"] == PropertyValue.string("First").wire)
        }
        _ = try await writer.save(Wire.save(updates: [Wire.update(id, baseVersion: 1, ["title": .string("Second")])]))
        let after = try #require(try await reader.refresh([id], skipFetched: true).objects.first)
        #expect(after.version == 2)
        #expect(after.values["title"] == PropertyValue.string("Second").wire)
        let refreshes = try await reader.stats().operations.first { $0.operation == "refresh" }
        #expect(refreshes?.requests == 3)
        await writer.close()
        await reader.close()
        try await server.stop()
    }
}
