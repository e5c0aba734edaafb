import Foundation
import Logging
import NIOCore
import StrataClient
import StrataModel
@testable import StrataServer
import StrataWire
import SwiftProtobuf
import Testing

/// The server does what `Protocol/PROTOCOL.md` says, where a client
/// written from the document alone would notice: unknown kinds refused,
/// not read as defaults; the codes the document gives; limits before the
/// hello; no file-system paths in answers. Statements of the document are
/// read from it where practical.
@Suite("Protocol exactness", .serialized, .timeLimit(.minutes(1)))
struct ProtocolExactnessTests {
    /// `Protocol/PROTOCOL.md`.
    static let document: String = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Protocol/PROTOCOL.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// A `Value` holding only field 30, a kind no version knows.
    static func unknownKind() throws -> Strata_V1_Value {
        try Strata_V1_Value(serializedBytes: [0xF0, 0x01, 0x01] as [UInt8])
    }

    /// The refusal a call must end with.
    static func refusal(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async throws -> StrataClientError {
        do {
            try await body()
        } catch let error as StrataClientError {
            return error
        }
        Issue.record("the request was not refused", sourceLocation: sourceLocation)
        throw CancellationError()
    }

    // MARK: - The document's own statements

    @Test("The version in the document's title is the one the server announces")
    func documentVersionIsAnnounced() async throws {
        let title = try #require(Self.document.split(separator: "\n").first)
        #expect(title == "# Strata wire protocol, version \(WireProtocol.version.major).\(WireProtocol.version.minor)")
        #expect(Self.document.contains("| `version` | the server's protocol version (\(WireProtocol.version.major).\(WireProtocol.version.minor)) |"))
        let server = try await TestServer.start()
        let client = server.client()
        let hello = try await client.connect()
        #expect(hello.version == WireProtocol.version)
        await client.close()
        try await server.stop()
    }

    @Test("Stats' operation names in the document are every name the server records")
    func statsOperationNamesMatchTheDocument() throws {
        let line = try #require(Self.document.split(separator: "\n").first { $0.contains("`operations[]` sorted by name (") })
        let list = try #require(line.range(of: "sorted by name (")).upperBound
        let end = try #require(line[list...].range(of: "):")).lowerBound
        let documented = line[list..<end].split(separator: ",").map { item in
            item.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "`")) } ?? ""
        }
        let requests: [Strata_V1_ClientFrame.OneOf_Request?] = [
            .hello(.init()), .ping(.init()), .getModel(.init()), .fetch(.init()), .save(.init()), .refresh(.init()),
            .subscribe(.init()), .unsubscribe(.init()), .stats(.init()), .history(.init()), .backup(.init()), nil,
        ]
        let recorded = Set(requests.map(Session.operationName))
        #expect(documented == documented.sorted(), "the document lists them sorted")
        #expect(Set(documented) == recorded)
    }

    // MARK: - Unknown kinds are refused, never defaults

    @Test("An update whose value is of an unknown kind is refused naming the attribute, and erases nothing")
    func unknownValueKindInAnUpdate() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        let saved = try await client.save(Wire.save(inserts: [Wire.insertBook("b", title: "Kept")]))
        let id = try #require(saved.inserted.first?.id)
        let error = try await Self.refusal {
            _ = try await client.save(Wire.save(updates: [Strata_V1_UpdatedObject.with {
                $0.id = id
                $0.values["title"] = try Self.unknownKind()
            }]))
        }
        #expect(error.code == .invalidArgument)
        #expect(error.strataCode == StrataError.Code.invalidValue.rawValue)
        #expect(error.message.contains("title"), "\(error.message)")
        let fetched = try await client.fetch(Wire.fetch("Book"))
        #expect(try fetched.objects.first?.value("title") == .string("Kept"))
        // In an insert and in a fetch variable alike.
        let insertError = try await Self.refusal {
            var insert = Wire.insertBook("c", title: "New")
            insert.values["author"] = try Self.unknownKind()
            _ = try await client.save(Wire.save(inserts: [insert]))
        }
        #expect(insertError.strataCode == StrataError.Code.invalidValue.rawValue)
        #expect(insertError.message.contains("author"), "\(insertError.message)")
        let variableError = try await Self.refusal {
            var fetch = Wire.fetch("Book", "title == $T")
            fetch.variables["T"] = Strata_V1_VariableValue.with { $0.value = (try? Self.unknownKind()) ?? Strata_V1_Value() }
            _ = try await client.fetch(fetch)
        }
        #expect(variableError.code == .invalidArgument)
        #expect(variableError.message.contains("$T"), "\(variableError.message)")
        #expect(try await client.fetch(Wire.fetch("Book", resultType: .count)).count == 1)
        await client.close()
        try await server.stop()
    }

    @Test("An unknown result_type is refused (140104)")
    func unknownResultType() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        let error = try await Self.refusal { _ = try await client.fetch(Wire.fetch("Book", resultType: .UNRECOGNIZED(7))) }
        #expect(error.code == .invalidArgument)
        #expect(error.strataCode == StrataError.Code.invalidValue.rawValue)
        #expect(error.message.contains("result_type 7"), "\(error.message)")
        await client.close()
        try await server.stop()
    }

    @Test("An unknown store_id is NOT_FOUND with 140104, as the document says")
    func unknownStoreID() async throws {
        #expect(Self.document.contains("a store this server does not serve → `NOT_FOUND` (with `strata_code` 140104)"))
        let server = try await TestServer.start()
        let client = server.client()
        let error = try await Self.refusal {
            var fetch = Wire.fetch("Book")
            fetch.storeID = "00000000-0000-0000-0000-000000000000"
            _ = try await client.fetch(fetch)
        }
        #expect(error.code == .notFound)
        #expect(error.strataCode == StrataError.Code.invalidValue.rawValue)
        let history = try await Self.refusal { _ = try await client.history(store: "Nowhere") }
        #expect(history.code == .notFound)
        #expect(history.strataCode == StrataError.Code.invalidValue.rawValue)
        await client.close()
        try await server.stop()
    }

    @Test("A value for a transient attribute is refused, not dropped")
    func transientValuesAreRefused() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        let error = try await Self.refusal {
            var insert = Wire.insertBook("b", title: "T")
            insert.values["publishMonthID"] = PropertyValue.string("2026-11").wire
            _ = try await client.save(Wire.save(inserts: [insert]))
        }
        #expect(error.code == .invalidArgument)
        #expect(error.strataCode == StrataError.Code.invalidValue.rawValue)
        #expect(error.message.contains("Book.publishMonthID") && error.message.contains("transient"), "\(error.message)")
        #expect(try await client.fetch(Wire.fetch("Book", resultType: .count)).count == 0, "nothing of the save was written")
        await client.close()
        try await server.stop()
    }

    // MARK: - Predicates

    @Test("A predicate of 1,000 OR-ed terms runs; strings with NUL are matched whole over the wire")
    func largeDisjunctionsAndNULStrings() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        _ = try await client.save(Wire.save(inserts: [
            Wire.insertBook("a", title: "NUL"), Wire.insertBook("b", title: "NUL\u{0}inside"), Wire.insertBook("c", title: "t7"),
        ]))
        let predicate = (0..<1000).map { "title == 't\($0)'" }.joined(separator: " OR ")
        #expect(try await client.fetch(Wire.fetch("Book", predicate, resultType: .count)).count == 1)
        var exact = Wire.fetch("Book", "title == $T")
        exact.variables["T"] = Strata_V1_VariableValue.with { $0.value = PropertyValue.string("NUL\u{0}inside").wire }
        let found = try await client.fetch(exact)
        #expect(try found.objects.map { try $0.value("title") } == [.string("NUL\u{0}inside")])
        var contains = Wire.fetch("Book", "title CONTAINS $Z", resultType: .count)
        contains.variables["Z"] = Strata_V1_VariableValue.with { $0.value = PropertyValue.string("\u{0}").wire }
        #expect(try await client.fetch(contains).count == 1)
        await client.close()
        try await server.stop()
    }

    @Test("UUIDs in predicates: a UUID variable or a UUID's text matches, other text does not type-check (140101), as documented")
    func uuidsInPredicates() async throws {
        #expect(Self.document.contains("or a string literal in the textual form, hex digits in either case"))
        let server = try await TestServer.start()
        let client = server.client()
        let uuid = UUID()
        _ = try await client.save(Wire.save(inserts: [Wire.insertBook("b", title: "U", uuid: uuid)]))
        var byVariable = Wire.fetch("Book", "uuid == $U", resultType: .count)
        byVariable.variables["U"] = Strata_V1_VariableValue.with { $0.value = PropertyValue.uuid(uuid).wire }
        #expect(try await client.fetch(byVariable).count == 1)
        #expect(try await client.fetch(Wire.fetch("Book", "uuid == '\(uuid.uuidString)'", resultType: .count)).count == 1)
        #expect(try await client.fetch(Wire.fetch("Book", "uuid == '\(uuid.uuidString.lowercased())'", resultType: .count)).count == 1)
        let error = try await Self.refusal { _ = try await client.fetch(Wire.fetch("Book", "uuid == 'not-a-uuid'")) }
        #expect(error.code == .invalidArgument)
        #expect(error.strataCode == StrataError.Code.predicateType.rawValue, "\(error)")
        await client.close()
        try await server.stop()
    }

    // MARK: - No paths in answers

    @Test("Store errors reach clients without the store's folder; the log keeps it")
    func answersCarryNoPaths() throws {
        let redactor = PathRedactor(paths: ["/srv/strata/data/Books.sqlite", "/srv/strata/data/Feedback.sqlite"])
        let error = StrataError(.storeOpen, "store /srv/strata/data/Books.sqlite: fetch failed: disk I/O error on /srv/strata/data/Books.sqlite-wal", details: ["store /srv/strata/data/Feedback.sqlite committed"])
        let status = Session.failureStatus(error, operation: "fetch", requestID: 1, redactor: redactor, logger: Logger(label: "test"))
        #expect(status.message == "store Books.sqlite: fetch failed: disk I/O error on Books.sqlite-wal")
        #expect(status.details == ["store Feedback.sqlite committed"])
        #expect(redactor.displayPath("/srv/strata/data/Books.sqlite") == "Books.sqlite")
    }

    @Test("Stats names each store by its file name, never its folder")
    func statsShowNoFolders() async throws {
        let server = try await TestServer.start()
        let client = server.client()
        let stats = try await client.stats()
        #expect(stats.stores.count == 2)
        for store in stats.stores {
            #expect(!store.path.contains("/"), "\(store.path)")
            #expect(store.path.hasSuffix(".sqlite"), "\(store.path)")
        }
        await client.close()
        try await server.stop()
    }

    // MARK: - Before the hello

    @Test("Before the hello only a small frame is read; after it, the negotiated limit")
    func smallFramesBeforeTheHello() async throws {
        let server = try await TestServer.start()
        // A hello larger than 16 KiB: refused before its payload is read.
        let big = try await RawConnection.connect(port: server.port)
        try await big.send(Strata_V1_ClientFrame.with {
            $0.requestID = 1
            $0.hello = Strata_V1_HelloRequest.with {
                $0.version = WireProtocol.version
                $0.clientName = String(repeating: "x", count: WireProtocol.helloFrameBytes + 1)
            }
        })
        let refused = try await big.requireFrame()
        #expect(refused.status.code == .resourceExhausted)
        #expect(refused.status.message.contains("\(WireProtocol.helloFrameBytes)"), "\(refused.status.message)")
        #expect(await big.closedByServer())
        // A hello of a few KiB is fine, and after its answer so is a 1 MiB ping.
        let fine = try await RawConnection.connect(port: server.port)
        let hello = try await fine.hello(name: String(repeating: "y", count: 8 * 1024))
        #expect(!hello.hasStatus, "\(hello.status)")
        try await fine.send(Strata_V1_ClientFrame.with {
            $0.requestID = 2
            $0.ping = Strata_V1_PingRequest.with { $0.payload = Data(repeating: 7, count: 1 << 20) }
        })
        let pong = try await fine.requireFrame()
        #expect(pong.ping.payload.count == 1 << 20)
        await fine.close()
        try await BadInputTests.expectServing(server)
        try await server.stop()
    }

    // MARK: - Failed authentication

    @Test("After a failed hello, every hello from that address waits its turn before its token is checked, right tokens too")
    func failedAuthenticationIsSlowed() async throws {
        let server = try await TestServer.start { $0.authToken = "s3cret-token" }
        var elapsed: [Duration] = []
        for _ in 0..<3 {
            let connection = try await RawConnection.connect(port: server.port)
            let started = ContinuousClock.now
            let answer = try await connection.hello(token: "guess")
            elapsed.append(.now - started)
            #expect(answer.status.code == .unauthenticated)
            #expect(!answer.status.message.contains("s3cret"))
            #expect(await connection.closedByServer())
        }
        // The first guess is answered at once; then 100 ms, then 200 ms (lower bounds only).
        #expect(elapsed[1] >= .milliseconds(100), "\(elapsed)")
        #expect(elapsed[2] >= .milliseconds(200), "\(elapsed)")
        // The right token waits its turn too, so a quick answer gives nothing away.
        let right = try await RawConnection.connect(port: server.port)
        let started = ContinuousClock.now
        #expect(!(try await right.hello(token: "s3cret-token")).hasStatus)
        #expect(ContinuousClock.now - started >= .milliseconds(400))
        await right.close()
        try await server.stop()
    }

    @Test("The throttle hands out turns one after another per address, and forgets")
    func throttleArithmetic() {
        let throttle = AuthFailureThrottle()
        let t0 = ContinuousClock.now
        #expect(throttle.admission(for: "10.0.0.1", now: t0) == .zero, "no failure yet")
        throttle.failed(from: "10.0.0.1", now: t0)
        // Parallel hellos from the address get successive turns.
        #expect(throttle.admission(for: "10.0.0.1", now: t0) == .milliseconds(100))
        #expect(throttle.admission(for: "10.0.0.1", now: t0) == .milliseconds(200))
        throttle.failed(from: "10.0.0.1", now: t0)
        #expect(throttle.admission(for: "10.0.0.1", now: t0) == .milliseconds(400), "the step doubled")
        // Another address is not slowed by these.
        #expect(throttle.admission(for: "10.0.0.2", now: t0) == .zero)
        // A minute without failures: forgotten.
        #expect(throttle.admission(for: "10.0.0.1", now: t0 + .seconds(120)) == .zero)
        // The step doubles up to 5 s and stays there.
        #expect(AuthFailureThrottle.step(after: 1) == .milliseconds(100))
        #expect(AuthFailureThrottle.step(after: 6) == .milliseconds(3200))
        #expect(AuthFailureThrottle.step(after: 7) == .seconds(5))
        #expect(AuthFailureThrottle.step(after: 40) == .seconds(5))
    }

    @Test("Failures are counted per IPv4 host and per IPv6 /64")
    func sourceAddresses() throws {
        let v4 = try SocketAddress(ipAddress: "192.0.2.7", port: 1234)
        #expect(ServerConnection.sourceAddress(v4) == "192.0.2.7")
        let a = try SocketAddress(ipAddress: "2001:db8:1:2::1", port: 1)
        let b = try SocketAddress(ipAddress: "2001:db8:1:2:ffff::9", port: 2)
        let c = try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 3)
        #expect(ServerConnection.sourceAddress(a) == ServerConnection.sourceAddress(b))
        #expect(ServerConnection.sourceAddress(a) != ServerConnection.sourceAddress(c))
        let mapped = try SocketAddress(ipAddress: "::ffff:192.0.2.7", port: 1)
        let otherMapped = try SocketAddress(ipAddress: "::ffff:192.0.2.8", port: 1)
        #expect(ServerConnection.sourceAddress(mapped) != ServerConnection.sourceAddress(otherMapped))
    }
}
