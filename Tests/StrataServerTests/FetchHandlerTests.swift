import Foundation
import NIOCore
import NIOConcurrencyHelpers
import NIOEmbedded
import Logging
import StrataAuth
import StrataContext
import StrataModel
import StrataQuery
import StrataSamples
import StrataStore
import StrataSQLite
import StrataWire
import SwiftProtobuf
import Testing
@testable import StrataServer

/// Small fetches answered on the event loop: the same message the async
/// side answers, and everything else passed on to it untouched.
@Suite struct FetchHandlerTests {
    /// A server core over the sample's SQLite stores with `books` books
    /// (pages 1, 2, …; titles "Book 1", …), and its container to close.
    private func core(books: Int = 40) async throws -> (ServerCore, PersistentContainer, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-fetch-handler-\(UUID().uuidString)")
        let container = try await PersistentContainer(
            model: BooksSample.model,
            storeDescriptions: BooksSample.sqliteStores(in: directory), factory: .standard,
            transformers: BooksSample.transformers,
            transientRules: BooksSample.transientRules
        )
        try await container.newBackgroundContext().perform { context in
            for i in 1...books {
                let book = try context.insert("Book")
                try book.setValue(.uuid(UUID()), forKey: "uuid")
                try book.setValue(.string("Book \(i)"), forKey: "title")
                try book.setValue(.integer(Int64(i)), forKey: "pages")
            }
            _ = try await context.save()
        }
        return (quietCore(container.coordinator), container, directory)
    }

    /// A channel with the handler, on a connection whose hello was answered.
    /// Its budgets are generous unless given: a test of what is answered
    /// must not depend on how busy the machine is (a read stopped at its
    /// budget, or a burst's budget spent, passes a request on).
    private static func greetedChannel(_ core: ServerCore, plans: FetchPlanCache = FetchPlanCache(), readBudget: Duration = .seconds(30), burstBudget: Duration = .seconds(30)) -> EmbeddedChannel {
        let state = ConnectionState()
        state.helloAccepted()
        state.greeted(clientName: "test")
        return EmbeddedChannel(handler: FetchHandler(core: core, state: state, plans: plans, maxFrameBytes: 1 << 20, readBudget: readBudget, burstBudget: burstBudget))
    }

    private func frame(_ request: Strata_V1_ClientFrame) throws -> Frame {
        Frame(payload: ByteBuffer(bytes: try request.serializedBytes() as [UInt8]))
    }

    private static func fetch(requestID: UInt64 = 9, _ configure: (inout Strata_V1_FetchRequest) -> Void) -> Strata_V1_ClientFrame {
        Strata_V1_ClientFrame.with {
            $0.requestID = requestID
            $0.fetch = Strata_V1_FetchRequest.with { request in
                request.entity = "Book"
                configure(&request)
            }
        }
    }

    /// What the async side answers: its frames, in order.
    private func asyncAnswer(_ core: ServerCore, _ request: Strata_V1_ClientFrame) async throws -> [Strata_V1_ServerFrame] {
        let frames = FrameCollector()
        try await core.fetch(request.fetch, clientName: "test") { batch, more in
            let payload = try ResponseWriter.fetchBatchPayload(requestID: request.requestID, more: more, batch: batch, maxFrameBytes: 1 << 20)
            frames.append(try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(payload)))
        }
        return frames.all
    }

    /// `request` answered on `channel`'s loop (not passed on): the frame written.
    private func loopAnswer(_ request: Strata_V1_ClientFrame, on channel: EmbeddedChannel) throws -> Strata_V1_ServerFrame {
        try channel.writeInbound(try frame(request))
        #expect(try channel.readInbound(as: Frame.self) == nil, "passed on: \(request.fetch)")
        var written = try #require(try channel.readOutbound(as: ByteBuffer.self))
        _ = written.readInteger(as: UInt8.self)
        _ = written.readInteger(as: UInt32.self)
        return try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(written))
    }

    private static let range = ["LOW": PropertyValue.integer(5), "HIGH": PropertyValue.integer(24)].mapValues { value in
        Strata_V1_VariableValue.with { $0.value = value.wire }
    }

    @Test("Queries and counts answered on the loop equal the async side's answers")
    func answersAsTheAsyncSideDoes() async throws {
        let (core, container, directory) = try await core()
        defer { try? FileManager.default.removeItem(at: directory) }
        let channel = Self.greetedChannel(core)
        let requests: [Strata_V1_ClientFrame] = [
            Self.fetch { $0.predicate = "pages >= $LOW AND pages <= $HIGH"; $0.variables = Self.range; $0.sort = [.with { $0.key = "pages" }]; $0.limit = 20 },
            Self.fetch { $0.predicate = "title BEGINSWITH 'Book 1'"; $0.sort = [.with { $0.key = "title"; $0.descending = true }]; $0.limit = 5; $0.offset = 2 },
            Self.fetch { $0.predicate = "pages > 1000"; $0.limit = 10 },
            Self.fetch { $0.resultType = .count; $0.predicate = "pages >= $LOW AND pages <= $HIGH"; $0.variables = Self.range },
            Self.fetch { $0.resultType = .count },
        ]
        for request in requests {
            try channel.writeInbound(try frame(request))
            #expect(try channel.readInbound(as: Frame.self) == nil, "passed on: \(request.fetch)")
            var written = try #require(try channel.readOutbound(as: ByteBuffer.self))
            #expect(written.readInteger(as: UInt8.self) == 0)
            #expect(written.readInteger(as: UInt32.self).map(Int.init) == written.readableBytes)
            let answer = try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(written))
            #expect([answer] == (try await asyncAnswer(core, request)), "\(request.fetch)")
        }
        #expect(core.statsResponse().operations.first { $0.operation == "fetch" }?.requests == UInt64(requests.count))
        _ = try channel.finish()
        try await container.close()
    }

    @Test("On a compressing connection, large answers are compressed as the async side compresses them")
    func compressesAsTheAsyncSideDoes() async throws {
        let (core, container, directory) = try await core()
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = ConnectionState()
        state.helloAccepted()
        state.greeted(clientName: "test")
        state.enableCompression()
        let channel = EmbeddedChannel(handler: FetchHandler(core: core, state: state, plans: FetchPlanCache(), maxFrameBytes: 1 << 20, readBudget: .seconds(30), burstBudget: .seconds(30)))
        let requests: [(Strata_V1_ClientFrame, compressed: Bool)] = [
            (Self.fetch { $0.sort = [.with { $0.key = "pages" }]; $0.limit = 30 }, true),
            (Self.fetch { $0.resultType = .count }, false),
        ]
        for (request, compressed) in requests {
            try channel.writeInbound(try frame(request))
            #expect(try channel.readInbound(as: Frame.self) == nil, "passed on: \(request.fetch)")
            var written = try #require(try channel.readOutbound(as: ByteBuffer.self))
            #expect(written.readInteger(as: UInt8.self) == (compressed ? WireProtocol.compressedFlag : 0))
            #expect(written.readInteger(as: UInt32.self).map(Int.init) == written.readableBytes)
            let payload = compressed ? try Zlib.inflate(written, limit: 1 << 20) : written
            let answer = try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(payload))
            #expect([answer] == (try await asyncAnswer(core, request)), "\(request.fetch)")
        }
        _ = try channel.finish()
        try await container.close()
    }

    @Test("Whatever it cannot answer whole goes on to the async side untouched")
    func passesOnWhatItCannotAnswer() async throws {
        let (core, container, directory) = try await core()
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = ConnectionState()
        let channel = EmbeddedChannel(handler: FetchHandler(core: core, state: state, plans: FetchPlanCache(), maxFrameBytes: 1 << 20, readBudget: .seconds(30), burstBudget: .seconds(30)))
        let small = Self.fetch { $0.limit = 3 }
        // Before the hello's answer.
        try channel.writeInbound(try frame(small))
        #expect(try channel.readInbound(as: Frame.self) != nil)
        state.helloAccepted()
        state.greeted(clientName: "test")
        let cases: [(String, Strata_V1_ClientFrame)] = [
            ("no limit", Self.fetch { _ in }),
            ("a limit past one batch", Self.fetch { $0.limit = 50; $0.batchSize = 10 }),
            ("a limit past the most rows answered here", Self.fetch { $0.limit = UInt32(FetchHandler.maximumRows + 1); $0.batchSize = UInt32(FetchHandler.maximumRows + 1) }),
            ("object IDs", Self.fetch { $0.resultType = .objectIds; $0.limit = 3 }),
            ("a fetched property named", Self.fetch { $0.limit = 3; $0.includeFetched = ["feedback"] }),
            ("a relationship named", Self.fetch { $0.limit = 3; $0.includeRelationships = ["feedback"] }),
            ("one store named", Self.fetch { $0.limit = 3; $0.storeID = "anything" }),
            ("an unknown entity", Self.fetch { $0.entity = "Nothing"; $0.limit = 3 }),
            ("a predicate that does not parse", Self.fetch { $0.predicate = "pages >>> 3"; $0.limit = 3 }),
            ("a variable missing", Self.fetch { $0.predicate = "pages > $NOPE"; $0.limit = 3 }),
            ("request id 0", Self.fetch(requestID: 0) { $0.limit = 3 }),
            ("a regular expression to match", Self.fetch { $0.predicate = "title MATCHES 'Book.*'"; $0.limit = 3 }),
            ("a count matching a regular expression", Self.fetch { $0.resultType = .count; $0.predicate = "title MATCHES 'Book.*'" }),
        ]
        for (why, request) in cases {
            try channel.writeInbound(try frame(request))
            #expect(try channel.readInbound(as: Frame.self) != nil, "\(why)")
            #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "\(why)")
        }
        // Not protobuf: the async side's protocol error.
        try channel.writeInbound(Frame(payload: ByteBuffer(bytes: [0x6A, 0xFF])))
        #expect(try channel.readInbound(as: Frame.self) != nil)
        // Still answering here: a small fetch is answered.
        try channel.writeInbound(try frame(small))
        #expect(try channel.readInbound(as: Frame.self) == nil)
        #expect(try channel.readOutbound(as: ByteBuffer.self) != nil)
        // A fetch whose body does not decode: passed on for the async
        // side's protocol error, and nothing after it is answered here.
        try channel.writeInbound(Frame(payload: ByteBuffer(bytes: [0x08, 0x05, 0x6A, 0x02, 0xFF, 0xFF])))
        #expect(try channel.readInbound(as: Frame.self) != nil)
        #expect(!state.answersOnEventLoop)
        try channel.writeInbound(try frame(small))
        #expect(try channel.readInbound(as: Frame.self) != nil)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        _ = try channel.finish()
        try await container.close()
    }

    @Test("Once a read burst's answers have taken their budget, the rest of the burst goes on to the async side")
    func aBurstHoldsTheLoopForItsBudgetOnly() async throws {
        let (core, container, directory) = try await core()
        defer { try? FileManager.default.removeItem(at: directory) }
        let channel = Self.greetedChannel(core, burstBudget: FetchHandler.burstBudget)
        let request = try frame(Self.fetch { $0.predicate = "pages >= 1"; $0.sort = [.with { $0.key = "pages" }]; $0.limit = 20 })
        // One read burst: frames with no read-complete between them. Each
        // answer takes far more than 1 ms / 400 (a read, its encoding).
        let frames = 400
        for _ in 0..<frames { channel.pipeline.fireChannelRead(request) }
        // The burst ends (answers are flushed then).
        channel.pipeline.fireChannelReadComplete()
        var answered = 0
        while try channel.readOutbound(as: ByteBuffer.self) != nil { answered += 1 }
        var passedOn = 0
        while try channel.readInbound(as: Frame.self) != nil { passedOn += 1 }
        #expect(answered >= 1 && passedOn >= 1, "answered \(answered), passed on \(passedOn)")
        #expect(answered + passedOn == frames)
        // A new burst: answered here again.
        try channel.writeInbound(request)
        #expect(try channel.readInbound(as: Frame.self) == nil)
        #expect(try channel.readOutbound(as: ByteBuffer.self) != nil)
        _ = try channel.finish()
        try await container.close()
    }

    @Test("Reads now: what the store reads, and nothing once it is closed")
    func readsNowAsTheStoreReads() async throws {
        let (core, container, directory) = try await core(books: 3)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(container.coordinator.stores.first { $0.entityNames.contains("Book") } as? SQLiteStore)
        let fetch = try core.coordinator.resolver.resolve(FetchRequest(entityName: "Book", fetchLimit: 3))
        let rows = try store.rowQuery(fetch), count = try store.countQuery(fetch)
        #expect(store.snapshotsNow(rows, of: "Book", budget: .seconds(10))?.count == 3)
        #expect(store.countNow(count, budget: .seconds(10)) == 3)
        try await container.close()
        // A closed store reads nothing here.
        #expect(store.snapshotsNow(rows, of: "Book", budget: .seconds(10)) == nil)
        #expect(store.countNow(count, budget: .seconds(10)) == nil)
    }

    @Test("A request seen before is answered from its kept statement with its own values")
    func keptStatementsAnswerWithTheirValues() async throws {
        let (core, container, directory) = try await core()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plans = FetchPlanCache()
        let channel = Self.greetedChannel(core, plans: plans)
        func range(_ low: Int64, _ high: Int64) -> [String: Strata_V1_VariableValue] {
            ["LOW": PropertyValue.integer(low), "HIGH": PropertyValue.integer(high)].mapValues { value in
                Strata_V1_VariableValue.with { $0.value = value.wire }
            }
        }
        var requests: [Strata_V1_ClientFrame] = []
        for (low, high) in [(5, 24), (1, 3), (30, 100), (7, 7), (50, 60)] as [(Int64, Int64)] {
            requests.append(Self.fetch { $0.predicate = "pages >= $LOW AND pages <= $HIGH"; $0.variables = range(low, high); $0.sort = [.with { $0.key = "pages" }]; $0.limit = 20 })
            requests.append(Self.fetch { $0.resultType = .count; $0.predicate = "pages >= $LOW AND pages <= $HIGH"; $0.variables = range(low, high) })
        }
        // Not kept (its values shape the statement): compiled each time.
        for list in [[1, 2], [3]] as [[Int64]] {
            requests.append(Self.fetch {
                $0.predicate = "pages IN $LIST"
                $0.variables = ["LIST": .with { $0.list = .with { $0.values = list.map { PropertyValue.integer($0).wire } } }]
                $0.limit = 10
            })
        }
        for request in requests {
            let answer = try loopAnswer(request, on: channel)
            #expect([answer] == (try await asyncAnswer(core, request)), "\(request.fetch)")
        }
        // One kept statement per shape (rows, count), one not kept.
        #expect(plans.count == 3)
        _ = try channel.finish()
        try await container.close()
    }

    @Test("A caller bound by read rules is answered on the loop with its rules AND-ed in, per identity and per rules generation")
    func ruleBoundCallersAreAnsweredWithTheirRules() async throws {
        let (plain, container, directory) = try await core()
        defer { try? FileManager.default.removeItem(at: directory) }
        func rules(_ bookRead: String) throws -> AccessRules {
            try AccessRules(json: Data(#"{"Book": {"read": "\#(bookRead)"}, "Feedback": {"read": "TRUEPREDICATE"}}"#.utf8), file: "rules.json", model: BooksSample.model)
        }
        let control = AccessControl(try rules("pages <= 10"))
        var logger = Logger(label: "strata.test")
        logger.logLevel = .critical
        let core = ServerCore(coordinator: plain.coordinator, configuration: ServerConfiguration(port: 0, accessControl: control), logger: logger)
        func channel(_ identity: Identity) -> (EmbeddedChannel, AccessPolicy?) {
            let policy = core.policy(for: identity)
            let state = ConnectionState()
            state.helloAccepted()
            state.greeted(clientName: "test", identity: identity, policy: policy)
            return (EmbeddedChannel(handler: FetchHandler(core: core, state: state, plans: FetchPlanCache(), maxFrameBytes: 1 << 20, readBudget: .seconds(30), burstBudget: .seconds(30))), policy)
        }
        let query = Self.fetch { $0.predicate = "pages >= $LOW AND pages <= $HIGH"; $0.variables = Self.range; $0.sort = [.with { $0.key = "pages" }]; $0.limit = 20 }
        let count = Self.fetch { $0.resultType = .count; $0.predicate = "pages >= $LOW AND pages <= $HIGH"; $0.variables = Self.range }
        /// Answers `request` on `channel`'s loop; checks it against the
        /// async side's answer for `policy`; returns the books' pages (or the count).
        func answer(_ request: Strata_V1_ClientFrame, on channel: EmbeddedChannel, policy: AccessPolicy?) async throws -> [Int64] {
            let frame = try loopAnswer(request, on: channel)
            let frames = FrameCollector()
            try await core.fetch(request.fetch, clientName: "test", policy: policy) { batch, more in
                let payload = try ResponseWriter.fetchBatchPayload(requestID: request.requestID, more: more, batch: batch, maxFrameBytes: 1 << 20)
                frames.append(try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(payload)))
            }
            #expect([frame] == frames.all, "\(request.fetch)")
            if request.fetch.resultType == .count { return [Int64(frame.fetch.count)] }
            return frame.fetch.objects.compactMap { state in state.values["pages"].flatMap { try? PropertyValue(wire: $0, field: "pages") }.flatMap { if case .integer(let pages) = $0 { pages } else { nil } } }
        }
        // Pages 5…24 asked, pages ≤ 10 allowed; asked twice (the second
        // from the kept statement).
        let (reader, readerPolicy) = channel(Identity(subject: "reader"))
        #expect(readerPolicy != nil)
        for _ in 0..<2 {
            #expect(try await answer(query, on: reader, policy: readerPolicy) == Array(5...10))
            #expect(try await answer(count, on: reader, policy: readerPolicy) == [6])
        }
        // An admin's same request is not limited, and is kept apart.
        let (admin, adminPolicy) = channel(Identity(subject: "root", roles: [Identity.adminRole]))
        #expect(adminPolicy == nil)
        #expect(try await answer(query, on: admin, policy: nil) == Array(5...24))
        // Rules replaced: the same request under the new rule.
        control.replace(try rules("pages > 20"))
        #expect(try await answer(query, on: reader, policy: readerPolicy) == Array(21...24))
        #expect(try await answer(count, on: reader, policy: readerPolicy) == [4])
        // A rule that reads the caller's identity: each caller its own rows.
        control.replace(try rules("title == $AUTH.subject"))
        let (book7, book7Policy) = channel(Identity(subject: "Book 7"))
        let (book9, book9Policy) = channel(Identity(subject: "Book 9"))
        for _ in 0..<2 {
            #expect(try await answer(query, on: book7, policy: book7Policy) == [7])
            #expect(try await answer(query, on: book9, policy: book9Policy) == [9])
        }
        for channel in [reader, admin, book7, book9] { _ = try channel.finish() }
        try await container.close()
    }
}

/// Frames collected from the async side's sends.
private final class FrameCollector: Sendable {
    private let frames = NIOLockedValueBox<[Strata_V1_ServerFrame]>([])
    func append(_ frame: Strata_V1_ServerFrame) { frames.withLockedValue { $0.append(frame) } }
    var all: [Strata_V1_ServerFrame] { frames.withLockedValue { $0 } }
}
